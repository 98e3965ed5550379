import { existsSync } from 'node:fs';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgentsHarness, type AgentsHarness } from '../support/agents.ts';
import { tempDir } from '../support/cli.ts';

/**
 * Approvals in the dashboard, in real headless Chromium against a real svc (the `general` runtime, the fake model
 * provider): a run whose `ask` tool waits shows as a badge on the navigation and a row of the Approvals page; its
 * run page offers Approve / Deny with a message, and follows the run to its end once the decision lands.
 */
const CHROMIUM = '/usr/bin/chromium';

describe.skipIf(!existsSync(CHROMIUM) && !process.env.CI)('approvals in the dashboard (Chromium)', { timeout: 120_000 }, () => {
  let h: AgentsHarness;
  let browser: BrowserContext;
  let page: Page;
  const consoleErrors: string[] = [];
  const heading = () => page.locator('main h1');
  const badge = () => page.locator('header.top nav [data-testid=pending-approvals]');
  const write = (content: string) => `CALL_TOOL fs_write {"path":"/work/note.txt","content":"${content}"}`;
  const start = async (prompt: string) => {
    const res = await h.svc.api('/api/runs', { method: 'POST', json: { profile: 'asker', prompt } });
    expect(res.status).toBe(202);
    return ((await res.json()) as { runId: string }).runId;
  };
  /** The timeline of the run page as the user reads it: one line per item. */
  const timeline = () => page.locator('.timeline > li[data-kind]').evaluateAll((els) => els.map((e) => `${e.getAttribute('data-kind')}: ${e.querySelector('.ev-body')?.textContent}`));

  beforeAll(async () => {
    h = await startAgentsHarness();
    const made = await h.svc.api('/api/profiles', { method: 'POST', json: { name: 'asker', runtime: 'general', model: 'openai-compatible:fake-model', tools: ['@files'], permissions: { fs_write: 'ask', '*': 'allow' } } });
    expect(made.status).toBe(201);
    browser = await chromium.launchPersistentContext(tempDir('svc-chromium-'), {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: 1280, height: 800 },
      args: ['--no-sandbox', '--disable-background-networking', '--disable-gpu', '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
    page = await browser.newPage();
    page.on('console', (m) => {
      if (m.type() === 'error') consoleErrors.push(`${page.url()}: ${m.text()}`);
    });
    page.on('pageerror', (err) => consoleErrors.push(`${page.url()}: uncaught ${err.message}`));
    await page.goto(`${h.svc.url}/dashboard`);
    await page.fill('input[name=key]', h.svc.key);
    await page.keyboard.press('Enter');
    await page.waitForURL((u) => u.pathname === '/dashboard');
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await h?.stop();
  });

  it('shows the waiting call as a badge and in the list, and approves it from the run page: the run ends with the tool’s result', async () => {
    await expect.poll(() => heading().textContent()).toBe('Overview');
    expect(await badge().count()).toBe(0);
    const runId = await start(write('from the dashboard'));

    // the badge counts the pending approval without a reload
    await expect.poll(() => badge().textContent(), { timeout: 20_000 }).toBe('1 pending');
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: /^Approvals/ }).click();
    await expect.poll(() => heading().textContent()).toBe('Approvals');
    const row = page.locator('main tbody tr[data-approval]');
    await expect.poll(() => row.count()).toBe(1);
    const cells = await row.locator('td').allTextContents();
    expect(cells[0]).toBe('fs_write');
    expect(JSON.parse(cells[1]!)).toEqual({ path: '/work/note.txt', content: 'from the dashboard' });
    expect(cells[2]).toBe(runId);
    expect(cells[3]).toBe('pending');
    const [approval] = (await (await h.svc.api(`/api/runs/${runId}/approvals`)).json()) as Array<{ id: string; expiresAt: string }>;
    expect(cells[4]).toBe(new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' }).format(new Date(approval!.expiresAt)));

    // the run's page: waiting, with the call and its decision form
    await row.getByRole('link', { name: `Open run ${runId}` }).click();
    await expect.poll(() => heading().textContent()).toBe(`Run ${runId}`);
    await expect.poll(() => page.locator('.facts .status').textContent()).toBe('waiting');
    const form = page.locator(`.approval[data-approval="${approval!.id}"]`);
    await form.waitFor();
    expect(await form.locator('.tool-name').textContent()).toBe('fs_write');
    expect(JSON.parse((await form.locator('.tool-input').textContent())!)).toEqual({ content: 'from the dashboard', path: '/work/note.txt' });
    expect(await timeline()).toContain('approval: approval fs_writewaits for a decision');

    await form.getByLabel('Message (optional)').fill('looks fine');
    await form.getByRole('button', { name: 'Approve' }).click();

    // the decision lands: the page follows the run to its end, with the tool's output
    await page.locator('.timeline[data-ended=true]').waitFor({ timeout: 30_000 });
    await expect.poll(() => page.locator('.facts .status').textContent()).toBe('ok');
    expect(await page.locator('section[aria-label="Pending approvals"]').count()).toBe(0);
    const seen = await timeline();
    expect(seen).toContain('approval: approval fs_writeapproved: looks fine');
    const tool = page.locator('.ev-tool').filter({ has: page.locator('.tool-name', { hasText: 'fs_write' }) });
    expect(await tool.locator('.tool-output').getAttribute('class')).toBe('tool-output');
    expect(await page.locator('.ev-result .result-text').textContent()).toContain('TOOL-RESULT-SEEN');
    expect(await page.locator('.ev-result .result-text').textContent()).not.toContain('was not run');
    expect(await (await h.svc.api(`/api/approvals/${approval!.id}`)).json()).toMatchObject({ status: 'approved', message: 'looks fine', decidedBy: expect.any(String) });
    const run = await (await h.svc.api(`/api/runs/${runId}`)).json();
    expect(run.status).toBe('ok');
    expect(run.events.find((e: { type: string }) => e.type === 'tool_result')).toMatchObject({ isError: false });
    await expect.poll(() => badge().count(), { timeout: 20_000 }).toBe(0);
  });

  it('denies with a reason from the run page: the model reads it and the run goes on', async () => {
    const runId = await start(write('not this'));
    await page.goto(`${h.svc.url}/dashboard/runs/${runId}`);
    await expect.poll(() => heading().textContent()).toBe(`Run ${runId}`);
    const form = page.locator('.approval');
    await form.waitFor({ timeout: 30_000 });
    await expect.poll(() => badge().textContent(), { timeout: 20_000 }).toBe('1 pending');
    await form.getByLabel('Message (optional)').fill('not on a Friday');
    await form.getByRole('button', { name: 'Deny' }).click();
    await page.locator('.timeline[data-ended=true]').waitFor({ timeout: 30_000 });
    expect(await timeline()).toContain('approval: approval fs_writedenied: not on a Friday');
    expect(await page.locator('.ev-result .result-text').textContent()).toContain('a person denied it: not on a Friday');
    await expect.poll(() => page.locator('.facts .status').textContent()).toBe('ok');
    // the list keeps the decided call under its status
    await page.goto(`${h.svc.url}/dashboard/approvals?status=denied`);
    await expect.poll(() => page.locator(`main tbody tr[data-approval] a[aria-label="Open run ${runId}"]`).count()).toBe(1);
  });

  it('logged no console error', () => {
    expect(consoleErrors).toEqual([]);
  });
});
