import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSvc, type TestSvc } from '../support/svc.ts';
import { cli, startFakeApi, tempDir } from '../support/cli.ts';
import { insertConnection } from '../../src/modules/conductor/apps/index.ts';
import { withTenant } from '../../src/db/index.ts';

/** `svc topology`, `bundles`, `apps` and `completion` through the real binary. */
const OWNER = 'ao_test_bootstrapbootstrapbootstrap01';

describe('svc topology, bundles, apps, completion', () => {
  let svc: TestSvc;
  let env: Record<string, string>;
  beforeAll(async () => {
    svc = await startTestSvc({ SVC_CONNECTED_APP_GITHUB_CLIENT_ID: 'id', SVC_CONNECTED_APP_GITHUB_CLIENT_SECRET: 'secret', SVC_CONNECTED_APP_SLACK_CLIENT_ID: 'id-only' });
    env = { SVC_CONFIG_DIR: tempDir(), SVC_API_URL: svc.url, SVC_API_KEY: OWNER };
  });
  afterAll(async () => {
    await svc?.stop();
  });

  it('reports a single-runner conductor as not found (exit 4)', async () => {
    const r = await cli(['topology', '--json'], env);
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/not found: .* has no topology/);
  });

  it('prints each runner of a multi-runner topology', async () => {
    const runners = [
      { hash: 'aaaa1111', url: 'http://r1:8080', healthy: true, latencyMs: 3, activeSessions: 2, error: null, capabilities: ['general', 'runtime_a'] },
      { hash: null, url: 'http://r2:8080', healthy: false, latencyMs: null, activeSessions: null, error: 'ECONNREFUSED', capabilities: [] },
    ];
    const fake = await startFakeApi({ 'GET /api/topology': { status: 200, body: { runners } } });
    try {
      const e = { ...env, SVC_API_URL: fake.url };
      expect((await cli(['topology', '--json'], e)).json()).toEqual(runners);
      expect((await cli(['topology'], e)).stdout).toBe('aaaa1111\thttp://r1:8080\thealthy\t3ms\t2\t-\tgeneral,runtime_a\n-\thttp://r2:8080\tunhealthy\t-\t-\tECONNREFUSED\t-\n');
    } finally {
      await fake.close();
    }
  });

  it('lists capability bundles unwrapped, each with value, label and description', async () => {
    const r = await cli(['bundles', '--json'], env);
    expect(r.code, r.stderr).toBe(0);
    const bundles = r.json();
    expect(bundles[0]).toEqual({ value: '@default', label: expect.any(String), description: expect.any(String) });
    expect(bundles.every((b: Record<string, unknown>) => Object.keys(b).join() === 'value,label,description')).toBe(true);
    expect((await cli(['bundles'], env)).stdout).toMatch(/^@default\t/);
  });

  it('lists connected-app providers (configured from the operator config) and the tenant connections', async () => {
    const db = svc.server.built.database!.db;
    const id = await withTenant(db, 'default', (tx) => insertConnection(tx, { tenantId: 'default', provider: 'github', appSlug: 'octo-app', scope: 'repo', mcpServerName: 'github' }));
    const r = await cli(['apps', '--json'], env);
    expect(r.code, r.stderr).toBe(0);
    const apps = r.json();
    expect(apps.providers).toContainEqual({ name: 'github', configured: true });
    expect(apps.providers).toContainEqual({ name: 'slack', configured: false });
    expect(apps.connections).toEqual([{ id, provider: 'github', appSlug: 'octo-app', scope: 'repo', status: 'active', mcpServerName: 'github', createdAt: expect.any(String) }]);
    const plain = (await cli(['apps'], env)).stdout.trim().split('\n');
    expect(plain).toContain('provider\tgithub\tconfigured');
    expect(plain).toContain(`connection\t${id}\tgithub\tocto-app\trepo\tactive\tgithub\t${apps.connections[0].createdAt}`);
    expect(plain.every((l) => /^(provider|connection)\t/.test(l))).toBe(true);
  });

  it('degrades a 503 from either connected-apps route to an empty list', async () => {
    const fake = await startFakeApi({
      'GET /api/connected-apps/providers': { status: 200, body: { providers: [{ name: 'github', configured: true }] } },
      'GET /api/connected-apps/connections': { status: 503, body: { error: 'connected apps unavailable' } },
    });
    try {
      const r = await cli(['apps', '--json'], { ...env, SVC_API_URL: fake.url });
      expect(r.code, r.stderr).toBe(0);
      expect(r.json()).toEqual({ providers: [{ name: 'github', configured: true }], connections: [] });
    } finally {
      await fake.close();
    }
  });

  it('prints a bash completion script that completes commands, subcommands and flags', async () => {
    const script = await cli(['completion', 'bash'], env);
    expect(script.code).toBe(0);
    const complete = (words: string[]) => {
      const program = `${script.stdout}\nCOMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _svc; printf '%s\\n' "\${COMPREPLY[@]}"`;
      const r = spawnSync('bash', ['-c', program], { encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(0);
      return r.stdout.trim().split('\n');
    };
    expect(complete(['svc', 'bil'])).toEqual(['billing']);
    expect(complete(['svc', 'billing', 'cap', ''])).toEqual(expect.arrayContaining(['set', '--json', '--context', '--api-url']));
    expect(complete(['svc', '--json', 'auth', 'login', '--with'])).toEqual(['--with-token']);
    expect(complete(['svc', 'completion', ''])).toEqual(expect.arrayContaining(['bash', 'zsh', 'fish']));
  });

  it('prints zsh and fish scripts, and refuses other shells (exit 2)', async () => {
    const zsh = await cli(['completion', 'zsh'], env);
    expect(zsh.stdout).toMatch(/^#compdef svc/);
    expect(zsh.stdout).toContain("('billing cap') choices=('set'");
    const fish = await cli(['completion', 'fish'], env);
    expect(fish.stdout).toContain(`complete -c svc -n 'test "(__svc_path)" = "auth"' -a 'login status logout --help'`);
    expect((await cli(['completion', 'tcsh'], env)).code).toBe(2);
  });
});
