import { afterEach, describe, expect, it } from 'vitest';
import { chmodSync, mkdtempSync, statSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runSvc, startSvcProcess, type SvcProcess } from '../support/process.ts';

describe('svc serve as a process', () => {
  const started: SvcProcess[] = [];
  const dirs: string[] = [];
  const tempDir = () => {
    const d = mkdtempSync(join(tmpdir(), 'svc-serve-'));
    chmodSync(d, 0o711); // as root, the embedded cluster's OS user must be able to reach <d>/pg
    dirs.push(d);
    return d;
  };
  afterEach(async () => {
    for (const p of started.splice(0)) await p.stop('SIGKILL');
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('exits 2 with one line naming the variable when the configuration is bad', async () => {
    const res = await runSvc(['serve'], { PORT: 'abc' });
    expect(res.code).toBe(2);
    expect(res.stderr.trim().split('\n')).toEqual(['svc: invalid configuration: PORT: got "abc"; allowed: an integer from 0 to 65535']);
    const role = await runSvc(['serve', '--role=chef'], {});
    expect(role.code).toBe(2);
    expect(role.stderr).toMatch(/SVC_ROLE \(--role\): got "chef"/);
  });

  it('boots on the embedded database, writes the first owner key once (0600), and keeps it across restarts', async () => {
    const dataDir = tempDir();
    const first = await startSvcProcess(['--role=conductor'], { SVC_DATA_DIR: dataDir });
    started.push(first);
    expect(await (await fetch(first.url + '/healthz')).text()).toBe('ok');
    const keyFile = join(dataDir, 'bootstrap-key');
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    const key = readFileSync(keyFile, 'utf8').trim();
    expect(first.output()).toContain(key);
    const who = await fetch(first.url + '/api/whoami', { headers: { authorization: `Bearer ${key}` } });
    expect(await who.json()).toMatchObject({ tenantId: 'default', role: 'owner' });
    expect(await first.stop('SIGTERM')).toBe(0);
    expect(first.output()).toMatch(/SIGTERM received/);

    const second = await startSvcProcess(['--role=conductor'], { SVC_DATA_DIR: dataDir });
    started.push(second);
    expect(second.output()).not.toContain(key); // not printed again
    const again = await fetch(second.url + '/api/whoami', { headers: { authorization: `Bearer ${key}` } });
    expect(again.status).toBe(200);
    expect(await second.stop('SIGINT')).toBe(0);
  });

  it('serves Prometheus metrics and a request id', async () => {
    const p = await startSvcProcess(['--role=conductor'], { DATABASE_URL: 'memory', SVC_BOOTSTRAP_TOKEN: 'ao_test_0123456789abcdef0123' });
    started.push(p);
    await fetch(p.url + '/api/whoami', { headers: { authorization: 'Bearer ao_test_0123456789abcdef0123' } });
    const res = await fetch(p.url + '/metrics');
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    expect(text).toMatch(/^# TYPE process_resident_memory_bytes gauge$/m);
    expect(text).toMatch(/^svc_http_request_duration_seconds_count\{method="GET",route="\/api\/whoami",status="200"\} 1$/m);
    expect(res.headers.get('x-request-id')).toBeTruthy();
  });
});

describe('graceful shutdown of the all-in-one server', () => {
  it('ends a streaming run with its terminal event on SIGTERM, exits 0, and keeps the run on disk', async () => {
    const { startFakeProvider } = await import('../support/fake-provider.ts');
    const fake = await startFakeProvider();
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-graceful-'));
    chmodSync(dataDir, 0o711);
    const key = 'ao_test_gracefulgracefulgraceful01';
    const env = { SVC_DATA_DIR: dataDir, SVC_BOOTSTRAP_TOKEN: key, OPENAI_COMPATIBLE_BASE_URL: fake.url, OPENAI_COMPATIBLE_API_KEY: 'x' };
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const p = await startSvcProcess([], env);
    try {
      await fetch(p.url + '/api/profiles', { method: 'POST', headers, body: JSON.stringify({ name: 'slow', runtime: 'general', model: 'openai-compatible:m' }) });
      const { runId } = await (await fetch(p.url + '/api/runs', { method: 'POST', headers, body: JSON.stringify({ profile: 'slow', prompt: 'SLOW_DELTAS 500 20' }) })).json();
      const stream = await fetch(`${p.url}/api/runs/${runId}/stream`, { headers });
      const text = stream.text();
      await fake.when(() => fake.requests.length > 0 || undefined);
      expect(await p.stop('SIGTERM')).toBe(0);
      const body = await text;
      const frames = body.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)));
      expect(frames.at(-1)).toMatchObject({ type: 'error', message: 'run interrupted: the conductor driving it shut down' });
      expect(frames.filter((f) => f.type === 'result' || f.type === 'error')).toHaveLength(1);

      const again = await startSvcProcess([], env);
      try {
        const run = await (await fetch(`${again.url}/api/runs/${runId}`, { headers })).json();
        expect(run.status).toBe('interrupted');
        expect(run.events.at(-1).type).toBe('error');
      } finally {
        await again.stop();
      }
    } finally {
      await p.stop('SIGKILL');
      await fake.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
