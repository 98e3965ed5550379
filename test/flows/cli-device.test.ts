import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSvc, type TestSvc } from '../support/svc.ts';
import { dashboardSession, modeOf, readConfig, spawnCli, tempDir } from '../support/cli.ts';

/**
 * Device login end to end: `svc auth login` (not a terminal, so the device flow) against our own server, approved or
 * denied on the conductor's `/device` page by a signed-in user, or left to expire.
 */
const OWNER = 'ao_test_bootstrapbootstrapbootstrap01';

interface DeviceLine {
  event: string;
  userCode: string;
  verificationUri: string;
  verificationUriComplete: string;
  expiresIn: number;
  interval: number;
}

describe('svc auth login (device code)', () => {
  let svc: TestSvc;
  beforeAll(async () => {
    svc = await startTestSvc();
  });
  afterAll(async () => {
    await svc?.stop();
  });

  const start = (dir: string, extra: string[] = [], env: Record<string, string> = {}) =>
    spawnCli(['auth', 'login', '--api-url', svc.url, '--json', ...extra], { SVC_CONFIG_DIR: dir, SVC_DEVICE_POLL_MS: '100', ...env });
  const deviceLine = async (p: ReturnType<typeof spawnCli>) => JSON.parse((await p.waitFor('stdout', /^.*\n/))[0]) as DeviceLine;

  it('prints the device_code line first, saves the key once approved in the dashboard, and prints the login object', async () => {
    const dir = tempDir();
    const p = start(dir, ['--label', 'laptop-login']);
    const code = await deviceLine(p);
    expect(code).toEqual({
      event: 'device_code',
      userCode: expect.stringMatching(/^[B-DF-HJ-NP-TV-XZ]{4}-[B-DF-HJ-NP-TV-XZ]{4}$/),
      verificationUri: `${svc.url}/device`,
      verificationUriComplete: `${svc.url}/device?code=${code.userCode}`,
      expiresIn: 900,
      interval: 5,
    });
    await p.waitFor('stderr', new RegExp(`enter the code ${code.userCode}`));
    const dash = await dashboardSession(svc.url, OWNER);
    const page = await dash.get(`/device?code=${code.userCode}`);
    const html = await page.text();
    expect(html).toContain('Approve svc CLI login');
    expect(html).toContain('laptop-login');
    expect((await dash.decideDevice(code.userCode, 'approve')).status).toBe(200);

    const { code: exit } = await p.exited;
    expect(exit, p.stderr()).toBe(0);
    const lines = p.stdout().trim().split('\n').map((l) => JSON.parse(l));
    expect(lines).toHaveLength(2);
    const saved = readConfig(dir).contexts.default;
    expect(lines[1]).toEqual({ context: 'default', apiUrl: svc.url, apiKey: expect.stringMatching(/^ao_test_.{4}….{4}$/), role: 'owner', org: 'default', keyId: saved.keyId, stored: join(dir, 'config.json') });
    expect(modeOf(join(dir, 'config.json'))).toBe(0o600);
    const who = await (await svc.api('/api/whoami', { key: saved.apiKey })).json();
    expect(who).toMatchObject({ tenantId: 'default', role: 'owner', keyId: saved.keyId });
    const keys = await (await svc.api('/api/api-keys')).json();
    expect(keys.find((k: { id: string }) => k.id === saved.keyId).name).toBe('laptop-login');
  });

  it('labels the key ci-<user>@<host> by default in CI', async () => {
    const dir = tempDir();
    const p = start(dir, ['--headless'], { CI: 'true', USER: 'builder' });
    const code = await deviceLine(p);
    const dash = await dashboardSession(svc.url, OWNER);
    await dash.decideDevice(code.userCode, 'approve');
    expect((await p.exited).code, p.stderr()).toBe(0);
    const keys = await (await svc.api('/api/api-keys')).json();
    expect(keys.find((k: { id: string }) => k.id === readConfig(dir).contexts.default.keyId).name).toMatch(/^ci-builder@/);
  });

  it('exits 3 and saves nothing when the login is denied', async () => {
    const dir = tempDir();
    const p = start(dir, ['--no-browser']);
    const code = await deviceLine(p);
    const dash = await dashboardSession(svc.url, OWNER);
    const denied = await dash.decideDevice(code.userCode, 'deny');
    expect(await denied.text()).toContain('Login denied');
    const { code: exit } = await p.exited;
    expect(exit).toBe(3);
    expect(p.stderr()).toMatch(/denied/);
    expect(existsSync(join(dir, 'config.json'))).toBe(false);
  });

  it('exits 1 when the code expires unapproved', async () => {
    const short = await startTestSvc({ SVC_DEVICE_CODE_TTL_MS: '1500' });
    try {
      const dir = tempDir();
      const p = spawnCli(['auth', 'login', '--api-url', short.url, '--json'], { SVC_CONFIG_DIR: dir, SVC_DEVICE_POLL_MS: '200' });
      const code = await deviceLine(p);
      expect(code.expiresIn).toBe(2);
      const { code: exit } = await p.exited;
      expect(exit).toBe(1);
      expect(p.stderr()).toMatch(/expired/);
      expect(existsSync(join(dir, 'config.json'))).toBe(false);
      // The page says so too.
      const dash = await dashboardSession(short.url, OWNER);
      expect((await dash.get(`/device?code=${code.userCode}`)).status).toBe(410);
    } finally {
      await short.stop();
    }
  });
});
