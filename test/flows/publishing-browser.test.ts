import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgentsHarness, type AgentsHarness } from '../support/agents.ts';
import { tempDir } from '../support/cli.ts';

/**
 * The public chat page of a published agent in real headless Chromium (the Debian package, driven by playwright-core):
 * the page loads with nothing but its own origin, sends a message, and the streamed reply appears; a second message
 * continues the conversation. The screenshot is kept in test-results/ (git-ignored) as the test's artifact.
 */
const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = join(import.meta.dirname, '..', '..', 'test-results');

describe.skipIf(!existsSync(CHROMIUM) && !process.env.CI)('the public chat page (Chromium)', { timeout: 90_000 }, () => {
  let h: AgentsHarness;
  let browser: BrowserContext;
  beforeAll(async () => {
    h = await startAgentsHarness();
    browser = await chromium.launchPersistentContext(tempDir('svc-chromium-'), {
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-background-networking', '--disable-gpu', '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await h?.stop();
  });

  it('sends a message and shows the streamed reply, then continues the conversation', async () => {
    expect((await h.svc.api('/api/profiles', { method: 'POST', json: { name: 'greeter', runtime: 'general', model: 'openai-compatible:gpt-4o' } })).status).toBe(201);
    expect((await h.svc.api('/api/profiles/greeter/publish', { method: 'POST', json: { visibility: 'public' } })).status).toBe(201);

    const page = await browser.newPage();
    const offsite: string[] = [];
    page.on('request', (r) => {
      if (!r.url().startsWith(h.svc.url)) offsite.push(r.url());
    });
    const res = await page.goto(`${h.svc.url}/chat/greeter`);
    expect(res?.status()).toBe(200);
    expect(await page.textContent('h1')).toBe('greeter');

    await page.fill('#message', 'DELTAS 3 hello from chromium');
    await page.click('button[type=submit]');
    const reply = page.locator('.msg.assistant[data-done=true]').first();
    await reply.waitFor();
    // DELTAS 3: the fake model streams the reply as three deltas, d0 d1 d2
    expect((await reply.textContent())!.trim()).toBe('d0 d1 d2');
    expect(await reply.getAttribute('class')).not.toContain('error');

    // Enter sends (Shift+Enter would start a new line)
    await page.fill('#message', 'and a second message');
    await page.locator('#message').press('Enter');
    await page.locator('.msg.assistant[data-done=true]').nth(1).waitFor();
    expect(await page.locator('.msg.assistant').nth(1).textContent()).toContain('and a second message');
    const second = h.fake.requests.filter((r) => JSON.stringify(r.body ?? '').includes('and a second message')).at(-1)!;
    expect(JSON.stringify(second.body)).toContain('hello from chromium');

    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, 'publishing-chat-page.png'), fullPage: true });
    expect(offsite).toEqual([]);

    expect(await page.inputValue('#message')).toBe('');
    // a phone's width: the page fits
    await page.setViewportSize({ width: 375, height: 812 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);

    // only public agents have a page; a private one's says so, and how to reach the agent
    expect((await h.svc.api('/api/profiles', { method: 'POST', json: { name: 'secret', runtime: 'general', model: 'openai-compatible:gpt-4o' } })).status).toBe(201);
    expect((await h.svc.api('/api/profiles/secret/publish', { method: 'POST', json: {} })).status).toBe(201);
    const hidden = await page.goto(`${h.svc.url}/chat/secret`);
    expect(hidden?.status()).toBe(403);
    expect(await page.textContent('h1')).toBe('secret is not public');
    expect(await page.textContent('main')).toContain('visibility private');
    expect((await fetch(`${h.svc.url}/chat/nobody-here`)).status).toBe(404);
  });

  it('shows that a call waits for the owner’s approval (approvals "owner"), then the reply once approved', async () => {
    const made = await h.svc.api('/api/profiles', { method: 'POST', json: { name: 'careful', runtime: 'general', model: 'openai-compatible:gpt-4o', tools: ['@files'], permissions: { fs_write: 'ask' } } });
    expect(made.status).toBe(201);
    expect((await h.svc.api('/api/profiles/careful/publish', { method: 'POST', json: { visibility: 'public', approvals: 'owner' } })).status).toBe(201);
    const page = await browser.newPage();
    await page.goto(`${h.svc.url}/chat/careful`);
    await page.fill('#message', 'CALL_TOOL fs_write {"path":"/work/a.txt","content":"hi"}');
    await page.click('button[type=submit]');
    const note = page.locator('.msg.note');
    await note.waitFor();
    expect(await note.textContent()).toBe("waiting for the agent's owner to approve a call to fs_write…");
    expect(await page.locator('.msg.assistant').getAttribute('data-waiting')).toBe('true');
    const [approval] = (await (await h.svc.api('/api/approvals?status=pending')).json()) as Array<{ id: string; runId: string }>;
    expect((await h.svc.api(`/api/runs/${approval!.runId}/approvals/${approval!.id}`, { method: 'POST', json: { decision: 'approve' } })).status).toBe(200);
    const reply = page.locator('.msg.assistant[data-done=true]');
    await reply.waitFor();
    expect(await note.textContent()).toBe('Approved: the agent goes on.');
    expect(await reply.textContent()).toContain('TOOL-RESULT-SEEN');
    expect(await reply.getAttribute('data-waiting')).toBeNull();
  });
});
