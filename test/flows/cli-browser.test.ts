import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSvc, type TestSvc } from '../support/svc.ts';
import { modeOf, readConfig, spawnCli, tempDir } from '../support/cli.ts';

/**
 * Browser login end to end in real headless Chromium (the Debian package, driven by playwright-core): the CLI listens
 * on 127.0.0.1 and prints the `/cli-auth` URL; the browser signs in to the conductor's dashboard, approves, and the
 * page posts the new key back to the CLI, which verifies and saves it.
 */
const CHROMIUM = '/usr/bin/chromium';
const OWNER = 'ao_test_bootstrapbootstrapbootstrap01';

// A cold Chromium start on a busy two-core machine can take a while: these tests get a minute and a half each.
describe.skipIf(!existsSync(CHROMIUM) && !process.env.CI)('svc auth login (browser loopback, Chromium)', { timeout: 90_000 }, () => {
  let svc: TestSvc;
  let browser: BrowserContext;
  beforeAll(async () => {
    svc = await startTestSvc();
    browser = await chromium.launchPersistentContext(tempDir('svc-chromium-'), {
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-background-networking', '--disable-gpu', '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await svc?.stop();
  });

  /** Starts the CLI's browser flow and returns the URL it printed. BROWSER=none: the test is the browser. */
  const startLogin = async (dir: string, extra: string[] = []) => {
    const p = spawnCli(['auth', 'login', '--browser', '--api-url', svc.url, ...extra], { SVC_CONFIG_DIR: dir, BROWSER: 'none' });
    const [, url] = await p.waitFor('stderr', /Opening (\S+)/);
    return { p, url };
  };

  it('signs in, approves, and the CLI saves the minted key with mode 0600', async () => {
    const dir = tempDir();
    const { p, url } = await startLogin(dir, ['--label', 'chromium-test', '--json']);
    expect(url).toMatch(new RegExp(`^${svc.url}/cli-auth\\?port=\\d+&state=[A-Za-z0-9_-]{32}&label=chromium-test$`));

    const page = await browser.newPage();
    await page.goto(url);
    await expect.poll(() => page.url()).toContain('/dashboard/sign-in');
    await page.fill('input[name=key]', OWNER);
    await page.click('button[type=submit]');
    await page.waitForSelector('text=Approve svc CLI login');
    expect(await page.textContent('main')).toContain('chromium-test');
    await page.click('button[value=approve]');
    await page.waitForSelector('text=svc CLI login complete');
    expect(page.url()).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    await page.close();

    const { code } = await p.exited;
    expect(code, p.stderr()).toBe(0);
    const saved = readConfig(dir);
    expect(saved.currentContext).toBe('default');
    expect(saved.contexts.default).toEqual({ apiUrl: svc.url, apiKey: expect.stringMatching(/^ao_test_/), keyId: expect.stringMatching(/^key_/) });
    expect(modeOf(join(dir, 'config.json'))).toBe(0o600);
    expect(JSON.parse(p.stdout())).toMatchObject({ context: 'default', role: 'owner', org: 'default', keyId: saved.contexts.default.keyId });
    const keys = await (await svc.api('/api/api-keys')).json();
    expect(keys.find((k: { id: string }) => k.id === saved.contexts.default.keyId)).toMatchObject({ name: 'chromium-test', role: 'owner' });
  });

  it('exits 3 and saves nothing when the user denies in the browser (already signed in: no second sign-in)', async () => {
    const dir = tempDir();
    const { p, url } = await startLogin(dir);
    const page = await browser.newPage();
    await page.goto(url);
    await page.waitForSelector('text=Approve svc CLI login');
    await page.click('button[value=deny]');
    await page.waitForSelector('text=Login denied');
    await page.close();
    const { code } = await p.exited;
    expect(code).toBe(3);
    expect(p.stderr()).toMatch(/denied in the browser/);
    expect(existsSync(join(dir, 'config.json'))).toBe(false);
  });
});
