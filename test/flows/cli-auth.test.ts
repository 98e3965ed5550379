import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSvc, type TestSvc } from '../support/svc.ts';
import { cli, readConfig, startFakeApi, tempDir } from '../support/cli.ts';

/** `svc auth login --with-token`, `auth status`, `auth logout`, `whoami`, through the real binary. */
const KEY = 'ao_test_bootstrapbootstrapbootstrap01';

describe('svc auth and whoami', () => {
  let svc: TestSvc;
  beforeAll(async () => {
    svc = await startTestSvc();
  });
  afterAll(async () => {
    await svc?.stop();
  });

  const mint = async (name: string) => (await (await svc.api('/api/api-keys', { method: 'POST', json: { name } })).json()) as { id: string; token: string };
  const loggedIn = (dir: string, ctx: Record<string, string>, name = 'default') => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ currentContext: name, contexts: { [name]: { apiUrl: svc.url, ...ctx } } }), { mode: 0o600 });
  };

  it('logs in with --with-token: verifies, saves into the selected context, makes it current, prints the JSON object', async () => {
    const dir = tempDir();
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ currentContext: 'other', contexts: { other: { apiUrl: 'http://other.example:1' } } }), { mode: 0o600 });
    const r = await cli(['auth', 'login', '--with-token', KEY, '--api-url', svc.url, '--context', 'lab', '--gateway-url', 'http://gw.example:9', '--json'], { SVC_CONFIG_DIR: dir });
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toEqual({ context: 'lab', apiUrl: svc.url, apiKey: 'ao_test_boot…ap01', role: null, org: null, keyId: null, stored: join(dir, 'config.json') });
    expect(readConfig(dir)).toEqual({
      currentContext: 'lab',
      contexts: { lab: { apiUrl: svc.url, gatewayUrl: 'http://gw.example:9', apiKey: KEY }, other: { apiUrl: 'http://other.example:1' } },
    });
  });

  it('accepts the same flags as `svc login` and prints labelled lines without --json', async () => {
    const dir = tempDir();
    const r = await cli(['login', '--with-token', KEY, '--api-url', svc.url], { SVC_CONFIG_DIR: dir });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('apiKey: ao_test_boot…ap01\n');
    expect(r.stdout).not.toContain(KEY);
    expect(readConfig(dir).contexts.default.apiKey).toBe(KEY);
  });

  it('refuses a bad key with exit 3 and writes nothing; a non-ao_ key draws a warning first', async () => {
    const dir = tempDir();
    const bad = await cli(['auth', 'login', '--with-token', 'ao_test_notavalidkeynotavalidkey00', '--api-url', svc.url], { SVC_CONFIG_DIR: dir });
    expect(bad.code).toBe(3);
    expect(bad.stderr).toMatch(/rejected/);
    expect(existsSync(join(dir, 'config.json'))).toBe(false);
    const foreign = await cli(['auth', 'login', '--with-token', 'sk-something-else-entirely', '--api-url', svc.url], { SVC_CONFIG_DIR: dir });
    expect(foreign.stderr).toMatch(/does not start with ao_/);
    expect(foreign.code).toBe(3);
    expect(existsSync(join(dir, 'config.json'))).toBe(false);
  });

  it('refuses a malformed --api-url before any request (exit 2)', async () => {
    const r = await cli(['auth', 'login', '--with-token', KEY, '--api-url', 'ftp://example.com'], { SVC_CONFIG_DIR: tempDir() });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--api-url: expected a URL starting with http:\/\/ or https:\/\//);
  });

  it('reports status with the key verified, and exits 3 without a key or with a rejected one', async () => {
    const dir = tempDir();
    loggedIn(dir, { apiKey: KEY });
    const ok = await cli(['auth', 'status', '--json'], { SVC_CONFIG_DIR: dir });
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.json()).toEqual({ context: 'default', apiUrl: svc.url, gatewayUrl: null, dashboardUrl: svc.url, apiKey: 'ao_test_boot…ap01', defaults: [], valid: true });
    loggedIn(dir, {});
    const none = await cli(['auth', 'status'], { SVC_CONFIG_DIR: dir });
    expect(none.code).toBe(3);
    expect(none.stderr).toMatch(/no API key for context "default"/);
    const revoked = await mint('to-revoke');
    await svc.api(`/api/api-keys/${revoked.id}`, { method: 'DELETE' });
    loggedIn(dir, { apiKey: revoked.token });
    const rejected = await cli(['auth', 'status'], { SVC_CONFIG_DIR: dir });
    expect(rejected.code).toBe(3);
    expect(rejected.stderr).toMatch(/API key revoked/);
  });

  it('answers whoami from GET /api/whoami', async () => {
    const dir = tempDir();
    const key = await mint('whoami');
    loggedIn(dir, { apiKey: key.token, keyId: key.id });
    const r = await cli(['whoami', '--json'], { SVC_CONFIG_DIR: dir });
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toEqual({
      context: 'default',
      apiUrl: svc.url,
      apiKey: `${key.token.slice(0, 12)}…${key.token.slice(-4)}`,
      tenantId: 'default',
      tenantName: 'Default',
      role: 'owner',
      authKind: 'api_key',
      keyId: key.id,
      serverSupportsWhoami: true,
    });
    const plain = await cli(['whoami'], { SVC_CONFIG_DIR: dir });
    expect(plain.stdout).toContain('role: owner\n');
    expect(plain.stdout).toContain('serverSupportsWhoami: yes\n');
  });

  it('falls back to GET /api/profiles when the server has no whoami (404)', async () => {
    const old = await startFakeApi({ 'GET /api/profiles': { status: 200, body: [] } });
    try {
      const r = await cli(['whoami', '--json'], { SVC_CONFIG_DIR: tempDir(), SVC_API_URL: old.url, SVC_API_KEY: KEY });
      expect(r.code, r.stderr).toBe(0);
      expect(r.json()).toEqual({ context: 'default', apiUrl: old.url, apiKey: 'ao_test_boot…ap01', tenantId: null, tenantName: null, role: null, authKind: null, keyId: null, serverSupportsWhoami: false });
      expect(old.requests.map((q) => q.path)).toEqual(['/api/whoami', '/api/profiles']);
      expect(old.requests[1].authorization).toBe(`Bearer ${KEY}`);
    } finally {
      await old.close();
    }
  });

  it('logs out: removes the key and key id, keeps the rest, always prints text', async () => {
    const dir = tempDir();
    loggedIn(dir, { apiKey: KEY, keyId: 'key_x', dashboardUrl: 'http://dash.example:1' });
    const r = await cli(['auth', 'logout', '--json'], { SVC_CONFIG_DIR: dir });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Logged out of context "default"/);
    expect(readConfig(dir).contexts.default).toEqual({ apiUrl: svc.url, dashboardUrl: 'http://dash.example:1' });
    const again = await cli(['auth', 'logout'], { SVC_CONFIG_DIR: dir });
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/nothing to do/);
  });

  it('revokes the key on the server with --revoke (no prompt in scripts) and then clears it', async () => {
    const dir = tempDir();
    const key = await mint('cli-revoke');
    loggedIn(dir, { apiKey: key.token, keyId: key.id });
    const r = await cli(['auth', 'logout', '--revoke'], { SVC_CONFIG_DIR: dir });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`Revoked key ${key.id}.`);
    expect((await svc.api('/api/whoami', { key: key.token })).status).toBe(401);
    expect(readConfig(dir).contexts.default.apiKey).toBeUndefined();
  });

  it('warns and still clears locally when --revoke cannot revoke (no key id, or the server refuses)', async () => {
    const dir = tempDir();
    loggedIn(dir, { apiKey: KEY });
    const noId = await cli(['auth', 'logout', '--revoke', '--yes'], { SVC_CONFIG_DIR: dir });
    expect(noId.code).toBe(0);
    expect(noId.stderr).toMatch(/no key id/);
    expect(readConfig(dir).contexts.default.apiKey).toBeUndefined();
    expect((await svc.api('/api/whoami')).status).toBe(200);
    loggedIn(dir, { apiKey: KEY, keyId: 'key_doesnotexist' });
    const refused = await cli(['auth', 'logout', '--revoke', '--yes'], { SVC_CONFIG_DIR: dir });
    expect(refused.code).toBe(0);
    expect(refused.stderr).toMatch(/could not revoke key key_doesnotexist: 404/);
    expect(readConfig(dir).contexts.default.keyId).toBeUndefined();
  });
});
