import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { collect, textOf } from '../support/agents.ts';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.ts';
import { callThroughRun, commandOutput, serve, startIdp, type Idp, type Served } from './support.ts';

/**
 * Issue 12, items 3–5: what a tenant's agent can reach with `run_command`. One `svc serve --role=all` process, its
 * secrets generated into its data folder, a process environment full of canaries (the owner key, the internal token,
 * provider keys). Tenant A (the operator's `default`) leaves secrets in its session's /work and its profile's /home;
 * tenant B, signed in through an identity provider, runs an `@exec` profile whose model (the fake provider) calls
 * `run_command` with the probe's commands, through the conductor's real run path. B gets nothing of the server's,
 * the data folder's or A's.
 */
const OWNER_KEY = 'ao_test_containmentcontainment001';
const CANARIES: Record<string, string> = {
  SVC_BOOTSTRAP_TOKEN: OWNER_KEY,
  SVC_INTERNAL_TOKEN: `canary-internal-${randomUUID()}`,
  OPENAI_API_KEY: `sk-canary-openai-${randomUUID()}`,
  ANTHROPIC_API_KEY: `sk-ant-canary-${randomUUID()}`,
  OPENAI_COMPATIBLE_API_KEY: `canary-compat-${randomUUID()}`,
  // the platform-paid aggregator behind /v1's svc/fake/… models: its key is the operator's
  SVC_AGGREGATOR_FAKE_KEY: `canary-aggregator-${randomUUID()}`,
};
const A_SECRET = `TENANT-A-SECRET-${randomUUID()}`;
const MODEL = 'openai-compatible:fake-model';

let fake: FakeProvider;
let idp: Idp;
let svc: Served;
let keyB: string;
let v1B: OpenAI;
const probes: string[] = [];

beforeAll(async () => {
  fake = await startFakeProvider();
  idp = await startIdp();
  svc = await serve(
    ['--role=all'],
    { ...CANARIES, OPENAI_COMPATIBLE_BASE_URL: fake.url, SVC_AGGREGATOR_FAKE_URL: fake.url, AGENT_ORC_ADMIN_TENANT: 'default', SVC_JWT_ISSUER: idp.issuer, SVC_JWT_JWKS_URL: idp.jwksUrl, SVC_LOG_LEVEL: 'warn' },
    OWNER_KEY,
    { database: true },
  );
  // tenant A: secrets in its session's /work and its profile's /home
  expect((await svc.api('/api/profiles', { json: { name: 'keeper', runtime: 'general', model: MODEL, tools: ['@default', '@exec'] } })).status).toBe(201);
  for (const path of ['/work/a-secret.txt', '/home/a-secret.txt']) {
    expect(await callThroughRun(svc, OWNER_KEY, 'keeper', 'fs_write', { path, content: A_SECRET })).toMatchObject({ isError: false });
  }
  // tenant B: a tenant of its own, signed in by its identity provider
  expect((await svc.api('/api/tenants', { json: { id: 'tenant-b', name: 'B' } })).status).toBe(201);
  keyB = await idp.token('tenant-b');
  expect((await svc.api('/api/whoami', { key: keyB })).status).toBe(200);
  expect((await svc.api('/api/profiles', { key: keyB, json: { name: 'prober', runtime: 'general', model: MODEL, tools: ['@exec'] } })).status).toBe(201);
  // and an API key of its own (the operator's first key for it), for the /v1 agents API
  const minted = await svc.api('/api/tenants/tenant-b/keys', { json: { name: 'b on v1' } });
  expect(minted.status).toBe(201);
  v1B = new OpenAI({ baseURL: `${svc.url}/v1`, apiKey: (await minted.json()).token, maxRetries: 0 });
}, 120_000);

afterAll(async () => {
  await svc?.stop();
  await idp?.close();
  await fake?.close();
  for (const p of probes) rmSync(p, { force: true });
});

const probe = (command: string) => commandOutput(svc, keyB, 'prober', command);

describe('a tenant\'s agent running commands', () => {
  it('item 3: sees no variable of the server\'s environment, its parent\'s or PID 1\'s', async () => {
    const out = await probe('env; echo ---; cat /proc/$PPID/environ | tr "\\0" "\\n"; echo ---; cat /proc/1/environ | tr "\\0" "\\n"; echo ---; for p in /proc/[0-9]*; do cat $p/environ; done | tr "\\0" "\\n"');
    for (const [name, value] of Object.entries(CANARIES)) {
      expect(out).not.toContain(value);
      expect(out).not.toContain(`${name}=`);
    }
    for (const name of ['DATABASE_URL', 'SVC_DATA_DIR', 'OPENAI_COMPATIBLE_BASE_URL', 'SVC_JWT_JWKS_URL']) expect(out).not.toContain(`${name}=`);
    expect(out).toContain('HOME=/home');
  });

  it('item 4: cannot read the signing keys, pepper or secrets key, nor find the data folder', async () => {
    // wherever this server keeps them: the secrets folder, or the data folder itself (before issue 12)
    const files = ['run-token-key', 'pepper', 'secrets-key', 'internal-token'].flatMap((f) => [join(svc.dataDir, 'secrets', f), join(svc.dataDir, f)]).filter((p) => existsSync(p));
    const secrets = [...new Set(files.map((p) => p.split('/').at(-1)!))];
    expect(secrets).toEqual(expect.arrayContaining(['run-token-key', 'pepper', 'secrets-key']));
    const values = files.map((p) => readFileSync(p, 'utf8').trim());
    const ups = [3, 4, 5, 6, 7, 8].map((n) => '../'.repeat(n));
    const reads = ups.flatMap((up) => secrets.flatMap((f) => [`${up}${f}`, `${up}secrets/${f}`])).join(' ');
    const names = ['run-token-key', 'pepper', 'secrets-key', 'internal-token', 'bootstrap-key'].map((n) => `-name ${n}`).join(' -o ');
    const out = await probe(`cat ${reads} 2>&1; ls -la ../../.. ../../../.. 2>&1; echo ---found; find / -path /proc -prune -o \\( ${names} \\) -print 2>/dev/null; echo ---end`);
    expect(out).toContain('---end');
    for (const value of values) expect(out).not.toContain(value);
    expect(out.split('---found')[1].split('---end')[0].trim()).toBe('');
    expect(out).not.toContain(svc.dataDir);
  });

  it('deliverable 3: keeps the keys it generated in the secrets folder (0700, files 0600), outside the runner\'s data folder', () => {
    const secretsDir = join(svc.dataDir, 'secrets');
    expect(statSync(secretsDir).mode & 0o777).toBe(0o700);
    // (the internal token is configured here, so no file of it)
    for (const file of ['run-token-key', 'pepper', 'secrets-key']) {
      expect(statSync(join(secretsDir, file)).mode & 0o777, file).toBe(0o600);
      expect(existsSync(join(svc.dataDir, file)), `${file} directly in the data folder`).toBe(false);
    }
    // the runner's data folder (what sandboxes mount from) neither holds nor lies inside it
    const runnerData = join(svc.dataDir, 'runner');
    expect(existsSync(runnerData)).toBe(true);
    expect(relative(runnerData, secretsDir).startsWith('..')).toBe(true);
    expect(relative(secretsDir, runnerData).startsWith('..')).toBe(true);
  });

  it('item 5: is contained: no host accounts, no writes outside its mounts, no other session or tenant, no host process', { timeout: 60_000 }, async () => {
    // what there is to find: tenant A's file in its profile's home on the host
    expect(readFileSync(join(svc.dataDir, 'runner', 'tenants', 'default', 'profiles', 'keeper', 'home', 'a-secret.txt'), 'utf8')).toContain(A_SECRET);
    const mark = `svc-probe-${randomUUID()}`;
    const outside = ['/etc', '/usr', '/tmp', svc.dataDir].map((dir) => join(dir, mark));
    probes.push(...outside);
    const out = await probe(
      [
        'cat /etc/passwd',
        'echo ---writes',
        ...['/etc', '/usr', '../../../..', '../../../../..'].map((dir) => `echo x > ${dir}/${mark} 2>/dev/null && echo wrote ${dir}`),
        `echo x > ./${mark} && echo wrote own work`,
        'echo ---processes',
        'for p in /proc/[0-9]*; do echo "$(cat $p/comm 2>/dev/null)"; done',
        'echo ---tenant-a',
        // from where the session's folder sits on the host, and from the root (bounded: a host's root is large)
        ...['../../..', '../../../..', '/'].map((dir) => `timeout 10 grep -rsl ${A_SECRET} ${dir} --exclude-dir=proc --exclude-dir=usr --exclude-dir=sys --exclude-dir=dev 2>/dev/null`),
        'echo ---end',
      ].join('; '),
    );
    const section = (name: string) => out.split(`---${name}`)[1]?.split('---')[0] ?? '';

    // the sandbox's own account list, not the host's
    const hostAccounts = readFileSync('/etc/passwd', 'utf8').split('\n').filter(Boolean).map((l) => l.split(':')[0]);
    const seenAccounts = out.split('---writes')[0].split('\n').filter((l) => l.includes(':')).map((l) => l.split(':')[0]);
    expect(seenAccounts).toContain('root');
    expect(seenAccounts.every((name) => ['root', 'nobody', 'sandbox'].includes(name))).toBe(true);
    expect(hostAccounts.filter((name) => !['root', 'nobody'].includes(name)).filter((name) => seenAccounts.includes(name))).toEqual([]);

    // writes land in its own /work only
    expect(section('writes').trim().split('\n')).toEqual(['wrote own work']);
    for (const path of outside) expect(existsSync(path)).toBe(false);

    // tenant A's /work and /home are out of sight
    expect(section('tenant-a').trim()).toBe('');
    expect(out).not.toContain(A_SECRET);

    // only the sandbox's own processes: bwrap as its PID 1, the shell and what it runs
    const processes = section('processes').trim().split('\n').filter(Boolean);
    expect(processes.length).toBeLessThan(10);
    expect(processes).not.toContain('node');
    expect(processes).not.toContain('postgres');
  });

  /** The probe of items 3–5 as one shell script, and what its output must not show. */
  const FULL_PROBE_NAMES = ['run-token-key', 'pepper', 'secrets-key', 'internal-token', 'bootstrap-key'].map((n) => `-name ${n}`).join(' -o ');
  const FULL_PROBE = [
    'env',
    'echo ---environ',
    'for p in /proc/[0-9]*; do cat $p/environ 2>/dev/null; echo; done | tr "\\0" "\\n"',
    'echo ---processes',
    'for p in /proc/[0-9]*; do echo "$(cat $p/comm 2>/dev/null)"; done',
    'echo ---found',
    `timeout 8 find / -path /proc -prune -o \\( ${FULL_PROBE_NAMES} \\) -print 2>/dev/null`,
    'echo ---tenant-a',
    `timeout 8 grep -rsl ${A_SECRET} / --exclude-dir=proc --exclude-dir=usr --exclude-dir=sys --exclude-dir=dev 2>/dev/null`,
    'echo ---passwd',
    'cat /etc/passwd',
    'echo ---end',
  ].join('; ');
  function expectNothingReached(out: string): void {
    const secrets = ['run-token-key', 'pepper', 'secrets-key', 'internal-token'].map((f) => join(svc.dataDir, 'secrets', f)).filter((p) => existsSync(p)).map((p) => readFileSync(p, 'utf8').trim());
    expect(secrets.length).toBeGreaterThanOrEqual(3);
    const section = (name: string) => out.split(`---${name}`)[1]?.split('\n---')[0] ?? '';
    for (const [name, value] of Object.entries(CANARIES)) {
      expect(out, name).not.toContain(value);
      expect(out).not.toContain(`${name}=`);
    }
    expect(out).toContain('---end'); // the whole probe ran (its output was not cut at the cap)
    for (const name of ['DATABASE_URL', 'SVC_DATA_DIR', 'OPENAI_COMPATIBLE_BASE_URL', 'SVC_AGGREGATOR_FAKE_URL', 'SVC_WORKER_TOKEN', 'SVC_WORKER_TOKEN_SECRET']) expect(out).not.toContain(`${name}=`);
    for (const value of secrets) expect(out).not.toContain(value);
    expect(out).not.toContain(svc.dataDir);
    expect(section('found').trim()).toBe('');
    expect(section('tenant-a').trim()).toBe('');
    expect(out).not.toContain(A_SECRET);
    const processes = section('processes').trim().split('\n').filter(Boolean);
    expect(processes).not.toContain('node');
    expect(processes).not.toContain('postgres');
    const hostAccounts = readFileSync('/etc/passwd', 'utf8').split('\n').filter(Boolean).map((l) => l.split(':')[0]);
    const seenAccounts = section('passwd').split('\n').filter((l) => l.includes(':')).map((l) => l.split(':')[0]);
    expect(seenAccounts).toContain('root');
    expect(hostAccounts.filter((name) => !['root', 'nobody'].includes(name)).filter((name) => seenAccounts.includes(name))).toEqual([]);
  }

  it("items 3–5 on a /v1 session with a hosted environment (run_command on by default there): nothing of the server's, the data folder's or tenant A's", { timeout: 90_000 }, async () => {
    const agent = await v1B.beta.agents.create({ model: 'svc/fake/fake-model' });
    const session = await v1B.beta.agents.sessions.create({ agent_id: agent.id, environment: { type: 'openai_hosted' } });
    const events = await collect(v1B.beta.agents.sessions.stream(session.id, { input: `CALL_TOOL run_command ${JSON.stringify({ command: 'sh', args: ['-c', FULL_PROBE] })}` }));
    expectNothingReached(textOf(events));
  });

  it("items 3–5 on a session with a sandbox worker of its own (workerMode sandbox, the process substrate): nothing of the server's, the data folder's or tenant A's", { timeout: 90_000 }, async () => {
    const profile = { name: 'sandboxed-prober', runtime: 'general', model: MODEL, tools: ['@exec'], workerMode: 'sandbox' };
    expect((await svc.api('/api/profiles', { key: keyB, json: profile })).status).toBe(201);
    const out = await commandOutput(svc, keyB, 'sandboxed-prober', FULL_PROBE);
    // it did run on a worker of its own
    const leases = await (await svc.api('/api/worker/leases', { key: keyB })).json();
    expect(JSON.stringify(leases)).toContain('"substrate":"process"');
    expectNothingReached(out);
  });
});
