import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSvc, type TestSvc } from '../support/svc.ts';
import { cli, startFakeApi, tempDir } from '../support/cli.ts';

/** `svc doctor`: eleven checks, four concurrent probes with 3000 ms timeouts, exit 1 only when a check fails. */
const OWNER = 'ao_test_bootstrapbootstrapbootstrap01';
const NAMES = ['config-file', 'config-permissions', 'context', 'api-url', 'tls', 'api-key', 'api-reachable', 'key-valid', 'clock-skew', 'server-version', 'dashboard-reachable'];

interface Check {
  name: string;
  status: string;
  message: string;
  fix?: string;
}
const byName = (checks: Check[]) => Object.fromEntries(checks.map((c) => [c.name, c]));

function configWith(ctx: Record<string, string>, mode = 0o600): string {
  const dir = tempDir();
  mkdirSync(dir, { recursive: true });
  const path = join(dir, 'config.json');
  writeFileSync(path, JSON.stringify({ currentContext: 'default', contexts: { default: ctx } }), { mode });
  chmodSync(path, mode);
  return dir;
}

describe('svc doctor', () => {
  let svc: TestSvc;
  beforeAll(async () => {
    // a server that can run agents (conductor, runner and worker), ready once its job queue is up
    svc = await startTestSvc({}, 'all');
    for (let status = 0; status !== 200; ) {
      status = (await fetch(`${svc.url}/readyz`)).status;
      if (status !== 200) await new Promise((r) => setTimeout(r, 50));
    }
  });
  afterAll(async () => {
    await svc?.stop();
  });

  it('passes all eleven checks against a healthy server and a well-kept config (exit 0)', async () => {
    const dir = configWith({ apiUrl: svc.url, apiKey: OWNER });
    const r = await cli(['doctor', '--json'], { SVC_CONFIG_DIR: dir });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const checks: Check[] = r.json();
    expect(checks.map((c) => c.name)).toEqual(NAMES);
    expect(checks.every((c) => c.status === 'pass' && !('fix' in c))).toBe(true);
    expect(byName(checks)['key-valid'].message).toBe('organization default, role owner');
    expect(byName(checks)['server-version'].message).toMatch(/^server 0\.\d+\.\d+, CLI 0\.\d+\.\d+$/);
    const plain = await cli(['doctor'], { SVC_CONFIG_DIR: dir });
    expect(plain.stdout.trim().split('\n').map((l) => l.split('\t').slice(0, 2))).toEqual(NAMES.map((n) => [n, 'pass']));
  });

  it('fails on a rejected key and a group-readable file holding keys, naming the fixes (exit 1)', async () => {
    const dir = configWith({ apiUrl: svc.url, apiKey: 'ao_test_rejectedrejectedrejected00' }, 0o644);
    const r = await cli(['doctor', '--json'], { SVC_CONFIG_DIR: dir });
    expect(r.code).toBe(1);
    const c = byName(r.json());
    expect(c['key-valid']).toMatchObject({ status: 'fail', fix: 'svc auth login' });
    expect(c['config-permissions']).toEqual({ name: 'config-permissions', status: 'fail', message: expect.stringMatching(/^mode 0644/), fix: `chmod 600 ${join(dir, 'config.json')}` });
    expect(c['api-reachable'].status).toBe('pass');
    expect(r.stderr).toMatch(/2 checks failed: config-permissions, key-valid/);
  });

  it('skips what depends on an unreachable API, and reports a missing key and context', async () => {
    const closed = await startFakeApi({});
    const url = closed.url;
    await closed.close();
    const r = await cli(['doctor', '--json'], { SVC_CONFIG_DIR: tempDir(), SVC_API_URL: url, SVC_DASHBOARD_URL: url });
    expect(r.code).toBe(1);
    const c = byName(r.json());
    expect(c['config-file']).toMatchObject({ status: 'warn', fix: 'svc auth login' });
    expect(c['config-permissions'].status).toBe('skip');
    expect(c.context.status).toBe('warn');
    expect(c['api-key']).toMatchObject({ status: 'fail', message: 'no API key' });
    expect(c['api-reachable']).toMatchObject({ status: 'fail', message: expect.stringMatching(/ECONNREFUSED/) });
    for (const name of ['key-valid', 'clock-skew', 'server-version']) expect(c[name].status).toBe('skip');
    expect(c['dashboard-reachable'].status).toBe('warn');
    expect(r.json().filter((x: Check) => x.status === 'skip').every((x: Check) => !('fix' in x))).toBe(true);
  });

  it('fails a named context that does not exist, and warns on plain http to a non-loopback host', async () => {
    const dir = configWith({ apiUrl: 'http://0.0.0.0:1', apiKey: OWNER });
    const r = await cli(['doctor', '--json', '--context', 'nope'], { SVC_CONFIG_DIR: dir, SVC_API_URL: 'http://0.0.0.0:1' });
    const c = byName(r.json());
    expect(c.context).toMatchObject({ status: 'fail', message: 'context "nope" (from --context) does not exist' });
    expect(c.tls).toMatchObject({ status: 'warn', fix: 'use an https:// API URL' });
  });

  it('reads clock skew and the server version from /readyz, and accepts a key through /api/profiles on an older server', async () => {
    const skewed = new Date(Date.now() - 10 * 60_000).toUTCString();
    const fake = await startFakeApi({
      'GET /readyz': { status: 200, body: { status: 'ready', checks: [] }, headers: { date: skewed, 'x-svc-version': '7.0.0' } },
      'GET /api/profiles': { status: 200, body: [] },
      'GET /': { status: 200, body: {} },
    });
    try {
      const r = await cli(['doctor', '--json'], { SVC_CONFIG_DIR: tempDir(), SVC_API_URL: fake.url, SVC_API_KEY: OWNER });
      const c = byName(r.json());
      expect(c['clock-skew']).toMatchObject({ status: 'fail', message: expect.stringMatching(/^clock 60\d s ahead of the server/), fix: expect.stringMatching(/NTP/) });
      expect(c['server-version']).toMatchObject({ status: 'warn', message: expect.stringMatching(/^server 7\.0\.0, CLI /) });
      expect(c['key-valid']).toMatchObject({ status: 'pass', message: expect.stringMatching(/no \/api\/whoami/) });
      expect(c['config-file']).toMatchObject({ status: 'pass' });
      expect(r.code).toBe(1);
    } finally {
      await fake.close();
    }
  });

  it("names the server's container engine, and warns (not fails) on a reachable server that is not ready", async () => {
    const engine = { name: 'container engine', ok: true, ms: 3, detail: 'docker 20.10.24 (API 1.41) at unix:///var/run/docker.sock, image svc:slim present' };
    const ready = await startFakeApi({ 'GET /readyz': { status: 200, body: { status: 'ready', checks: [engine] } } });
    const notReady = await startFakeApi({ 'GET /readyz': { status: 503, body: { status: 'not ready', error: 'database: connection refused', checks: [engine] } } });
    try {
      const a = byName((await cli(['doctor', '--json'], { SVC_CONFIG_DIR: tempDir(), SVC_API_URL: ready.url, SVC_API_KEY: OWNER })).json());
      expect(a['api-reachable']).toEqual({ name: 'api-reachable', status: 'pass', message: expect.stringMatching(/^GET \/readyz 200 in \d+ ms; container engine: docker 20\.10\.24 \(API 1\.41\) at unix:\/\/\/var\/run\/docker\.sock, image svc:slim present$/) });
      const b = byName((await cli(['doctor', '--json'], { SVC_CONFIG_DIR: tempDir(), SVC_API_URL: notReady.url, SVC_API_KEY: OWNER })).json());
      expect(b['api-reachable']).toMatchObject({ status: 'warn', message: expect.stringMatching(/^reachable, not ready: database: connection refused; container engine: docker 20\.10\.24/) });
    } finally {
      await ready.close();
      await notReady.close();
    }
  });

  it("names the sandbox limits the server's runners report, and their readiness warnings, inside api-reachable", async () => {
    const runner = {
      name: 'runner http://runner-a:7070',
      ok: true,
      ms: 2,
      detail: 'sandbox limits best-effort: cgroup-v1 (memory, cpu, pids), timer (wall time), rlimit (cpu time, file size, open files), none (disk), runner (output)',
      warning: 'sandbox limits best-effort, not enforced: disk: no loop device',
    };
    const fake = await startFakeApi({
      'GET /readyz': { status: 200, body: { status: 'ready', checks: [runner, { ...runner, name: 'runner http://runner-b:7070' }], warnings: [`${runner.name}: ${runner.warning}`] } },
    });
    try {
      const r = await cli(['doctor', '--json'], { SVC_CONFIG_DIR: tempDir(), SVC_API_URL: fake.url, SVC_API_KEY: OWNER });
      const c = byName(r.json());
      expect(r.json().map((x: Check) => x.name)).toEqual(NAMES); // still eleven
      expect(c['api-reachable']).toEqual({
        name: 'api-reachable',
        status: 'pass',
        message: expect.stringMatching(
          /^GET \/readyz 200 in \d+ ms; sandbox limits best-effort: cgroup-v1 \(memory, cpu, pids\), timer \(wall time\), rlimit \(cpu time, file size, open files\), none \(disk\), runner \(output\); warning: runner http:\/\/runner-a:7070: sandbox limits best-effort, not enforced: disk: no loop device$/,
        ),
      });
    } finally {
      await fake.close();
    }
  });

  it('runs the four network probes at once, each cut off after 3000 ms', async () => {
    const fake = await startFakeApi({ 'GET /readyz': 'hang', 'GET /api/whoami': 'hang', 'GET /api/profiles': 'hang', 'GET /dash': 'hang' });
    try {
      const started = Date.now();
      const r = await cli(['doctor', '--json'], { SVC_CONFIG_DIR: tempDir(), SVC_API_URL: fake.url, SVC_API_KEY: OWNER, SVC_DASHBOARD_URL: `${fake.url}/dash` });
      const elapsed = Date.now() - started;
      expect(r.code).toBe(1);
      const c = byName(r.json());
      expect(c['api-reachable'].message).toBe('GET /readyz: timed out after 3000 ms');
      expect(c['dashboard-reachable'].message).toMatch(/timed out after 3000 ms/);
      expect(fake.requests.map((q) => q.path).sort()).toEqual(['/api/profiles', '/api/whoami', '/dash', '/readyz']);
      // In sequence the probes would take 12 s.
      expect(elapsed).toBeLessThan(9000);
    } finally {
      await fake.close();
    }
  });
});
