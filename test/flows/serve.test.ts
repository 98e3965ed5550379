import { afterEach, describe, expect, it, vi } from 'vitest';
import { chmodSync, mkdtempSync, statSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { NODE, runSvc, startSvcProcess, SVC_BIN, type SvcProcess } from '../support/process.ts';

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

  it('answers every request 503 "starting" while its modules start, then /healthz 200 ok', async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as AddressInfo;
        probe.close(() => resolve(port));
      });
    });
    const child = spawn(NODE, [SVC_BIN, 'serve', '--role=conductor', `--port=${port}`], { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', SVC_LOG_LEVEL: 'warn', SVC_DATA_DIR: tempDir() }, stdio: 'ignore' });
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    try {
      // polled back to back from spawn on: refused until it listens, then "starting" (whatever the path) until it serves
      const paths = ['/healthz', '/api/whoami'];
      const seen: Record<string, string[]> = { '/healthz': [], '/api/whoami': [] };
      while (seen['/healthz'].at(-1) !== '200 ok') {
        const answers = await Promise.all(paths.map((p) => fetch(`http://127.0.0.1:${port}${p}`).then(async (r) => `${r.status} ${await r.text()}`, () => 'refused')));
        answers.forEach((a, i) => a !== 'refused' && seen[paths[i]].push(a));
      }
      // per path: "starting" answers, then only what the started server answers (the two may straddle the moment)
      const startedAt = (answers: string[]) => answers.findIndex((a) => a !== '503 starting');
      expect(seen['/healthz'].slice(startedAt(seen['/healthz']))).toEqual(['200 ok']);
      expect(seen['/healthz'].slice(0, startedAt(seen['/healthz'])).length).toBeGreaterThan(0);
      const whoami = seen['/api/whoami'];
      const whoamiStarted = startedAt(whoami) < 0 ? [] : whoami.slice(startedAt(whoami));
      expect(whoamiStarted.every((a) => a.startsWith('401 '))).toBe(true);
    } finally {
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    }
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
  }, 90_000); // two boots of an embedded cluster in a row
});

describe('the job queue comes up after the server serves', () => {
  it('serves a run at once after a restart, and its runFinished subscriber (billing) still charges it', async () => {
    const { startFakeProvider } = await import('../support/fake-provider.ts');
    const { isTerminalEvent, readSse } = await import('../support/sse.ts');
    const fake = await startFakeProvider();
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-queue-later-'));
    chmodSync(dataDir, 0o711);
    const key = 'ao_test_queuelaterqueuelater00001';
    const env = { SVC_DATA_DIR: dataDir, SVC_BOOTSTRAP_TOKEN: key, SVC_BILLING: 'ledger', AGENT_ORC_ADMIN_TENANT: 'default', OPENAI_COMPATIBLE_BASE_URL: fake.url, OPENAI_COMPATIBLE_API_KEY: 'x' };
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const procs: SvcProcess[] = [];
    try {
      const first = await startSvcProcess([], env);
      procs.push(first);
      const post = (p: SvcProcess, path: string, body: unknown) => fetch(p.url + path, { method: 'POST', headers, body: JSON.stringify(body) });
      expect((await post(first, '/api/profiles', { name: 'priced', runtime: 'general', model: 'openai-compatible:gpt-4o' })).status).toBe(201);
      expect((await post(first, '/api/billing/grants', { tenantId: 'default', amountMicroUSD: 1_000_000 })).status).toBe(201);
      expect(await first.stop('SIGTERM')).toBe(0);

      // the restart: the first thing it is asked is a run, streamed to its end, while its job queue may still be starting
      const again = await startSvcProcess([], env);
      procs.push(again);
      const created = await post(again, '/api/runs', { profile: 'priced', prompt: 'hello there' });
      expect(created.status).toBe(202);
      const { runId } = (await created.json()) as { runId: string };
      const frames = await readSse(await fetch(`${again.url}/api/runs/${runId}/stream`, { headers }));
      expect(frames.map((f) => f.event).filter(isTerminalEvent)).toEqual([expect.objectContaining({ type: 'result' })]);
      // the run's end reached the billing subscriber through the queue: the wallet is charged once the job ran
      const balance = async () => ((await (await fetch(again.url + '/api/billing/wallet', { headers })).json()) as { balanceMicroUSD: number }).balanceMicroUSD;
      await vi.waitFor(async () => expect(await balance()).toBeLessThan(1_000_000), { timeout: 30_000, interval: 100 });
      const ready = await (await fetch(again.url + '/readyz')).json();
      expect(ready.checks).toContainEqual(expect.objectContaining({ name: 'job queue', ok: true }));
      expect(await again.stop('SIGTERM')).toBe(0);
    } finally {
      for (const p of procs) await p.stop('SIGKILL');
      await fake.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 90_000); // two boots of an embedded cluster in a row

  it('stops and exits 1, naming the fix, when the job queue cannot start after the server began serving', async () => {
    const { APP_ROLE, connect, createTestDatabase } = await import('../support/pg.ts');
    const db = await createTestDatabase();
    const admin = connect(db.adminUrl, { max: 1 });
    try {
      // svc's role may create tables in public (the migrations run) but not schemas (the job queue's own)
      await admin.unsafe(`ALTER DATABASE ${db.name} OWNER TO CURRENT_USER`);
      await admin.unsafe(`GRANT ALL ON SCHEMA public TO ${APP_ROLE}`);
      const p = await startSvcProcess(['--role=conductor'], { DATABASE_URL: db.url, SVC_BOOTSTRAP_TOKEN: 'ao_test_queuefailsqueuefails00001' });
      expect(await p.exited).toBe(1);
      expect(p.output()).toMatch(/cannot install its schema "pgboss".*GRANT CREATE ON DATABASE/s);
      expect(p.output()).toMatch(/shutting down/);
    } finally {
      await admin.end({ timeout: 1 });
      await db.drop();
    }
  });
});
