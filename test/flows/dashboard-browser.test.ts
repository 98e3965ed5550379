import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgentsHarness, type AgentsHarness } from '../support/agents.ts';
import { dashboardSession, tempDir } from '../support/cli.ts';

/**
 * The dashboard in real headless Chromium (Debian's package, driven by playwright-core), against a real svc (role all,
 * the fake model provider behind openai-compatible): sign in, create a profile (first seeing the API's own validation
 * message), run it from the playground and watch the reply stream and a tool call, open the run's page and see the
 * same events, cancel a long run from its page, and visit every page. Main actions are done from the keyboard; every
 * page gets a screenshot in test-results/ (git-ignored); no page logs a console error.
 */
const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = join(import.meta.dirname, '..', '..', 'test-results', 'dashboard');

describe.skipIf(!existsSync(CHROMIUM) && !process.env.CI)('the dashboard (Chromium)', { timeout: 120_000 }, () => {
  let h: AgentsHarness;
  let browser: BrowserContext;
  let page: Page;
  const consoleErrors: string[] = [];
  const offsite: string[] = [];

  /** Screenshots the page, after checking every form control on it has a label and every button a name. */
  const shot = async (name: string) => {
    const unlabelled = await page.evaluate(() =>
      [...document.querySelectorAll<HTMLElement>('input:not([type=hidden]), select, textarea, button')]
        .filter((el) => !(el instanceof HTMLButtonElement ? (el.textContent ?? '').trim() || el.getAttribute('aria-label') : (el as HTMLInputElement).labels?.length || el.getAttribute('aria-label')))
        .map((el) => el.outerHTML.slice(0, 120)),
    );
    expect(unlabelled, name).toEqual([]);
    await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
  };
  /** The heading of the page that is showing (it takes focus when a page opens). */
  const heading = () => page.locator('main h1');
  const go = async (navLabel: string, title: string | RegExp) => {
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: navLabel, exact: true }).click();
    await expect.poll(() => heading().textContent()).toMatch(title);
  };
  /** The page's heading has focus; Tab moves to the next control, as a keyboard user would. */
  const tabTo = async (selector: string, max = 12) => {
    // the control is on the page (and enabled) before the first Tab: a slow render must not be read as "unreachable"
    await page.locator(selector).waitFor();
    await expect.poll(() => page.locator(selector).isEnabled()).toBe(true);
    for (let i = 0; i < max; i++) {
      await page.keyboard.press('Tab');
      if (await page.locator(selector).evaluate((el) => el === document.activeElement)) return;
    }
    throw new Error(`Tab never reached ${selector}`);
  };

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    h = await startAgentsHarness();
    browser = await chromium.launchPersistentContext(tempDir('svc-chromium-'), {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: 1280, height: 800 },
      // the viewer's own timezone (UTC+9, so a page showing UTC would be seen) and locale
      timezoneId: 'Asia/Tokyo',
      locale: 'en-US',
      args: ['--no-sandbox', '--disable-background-networking', '--disable-gpu', '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
    page = await browser.newPage();
    page.on('console', (m) => {
      if (m.type() === 'error') consoleErrors.push(`${page.url()}: ${m.text()}`);
    });
    page.on('pageerror', (err) => consoleErrors.push(`${page.url()}: uncaught ${err.message}`));
    page.on('request', (r) => {
      if (!r.url().startsWith(h.svc.url) && !r.url().startsWith('data:')) offsite.push(r.url());
    });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await h?.stop();
  });

  it('signs in with a key from the keyboard and lands on the overview', async () => {
    const res = await page.goto(`${h.svc.url}/dashboard/runs`);
    expect(res?.status()).toBe(200);
    expect(page.url()).toContain('/dashboard/sign-in?next=%2Fdashboard%2Fruns');
    // the key field takes focus on load (autofocus); wait for it, as a keyboard user would, before typing
    await expect.poll(() => page.evaluate(() => (document.activeElement as HTMLInputElement | null)?.type)).toBe('password');
    await page.keyboard.type(h.svc.key);
    await page.keyboard.press('Enter');
    await expect.poll(() => heading().textContent()).toBe('Runs');
    expect(new URL(page.url()).pathname).toBe('/dashboard/runs');
    await go('Overview', 'Overview');
    await expect.poll(() => page.locator('header.top .who').textContent()).toContain('owner');
    await page.locator('.chart canvas').first().waitFor();
  });

  it('creates a profile, showing the API’s own validation message first', async () => {
    await go('Profiles', 'Profiles');
    await page.getByRole('link', { name: 'New profile' }).click();
    await expect.poll(() => heading().textContent()).toBe('New profile');
    await page.locator('#p-name').waitFor();
    await tabTo('#p-name');
    await page.keyboard.type('helper');
    await tabTo('#p-model', 3);
    await page.keyboard.type('gpt-4o'); // no provider prefix: the API refuses it
    await page.keyboard.press('Enter');
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(/^model: expected <provider>:<model_id>.* for runtime general/);
    expect((await h.svc.api('/api/profiles/helper')).status).toBe(404);

    await page.fill('#p-model', 'openai-compatible:gpt-4o');
    await page.fill('#p-system', 'You are a careful helper.');
    await page.locator('#p-model').press('Enter');
    await expect.poll(() => heading().textContent()).toBe('Profile helper');
    const saved = await (await h.svc.api('/api/profiles/helper')).json();
    expect(saved).toMatchObject({ name: 'helper', runtime: 'general', model: 'openai-compatible:gpt-4o', systemPrompt: 'You are a careful helper.' });
    // edit: the tools field and the other settings as JSON
    await page.fill('#p-tools', 'fs_read, fs_write');
    await page.fill('#p-other', '{"network": "sometimes"}');
    await page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('network');
    await page.fill('#p-other', '');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    expect(await (await h.svc.api('/api/profiles/helper')).json()).toMatchObject({ tools: ['fs_read', 'fs_write'], systemPrompt: 'You are a careful helper.' });
    await shot('profile-edit');
    await go('Profiles', 'Profiles');
    await page.locator('tr[data-profile=helper]').waitFor();
    await shot('profiles');
  });

  let toolRunId = '';
  let playgroundEvents: string[] = [];

  it('runs the profile from the playground: the reply streams in, then a tool call with its input and output', async () => {
    await go('Playground', 'Playground');
    expect(await page.locator('#profile').inputValue()).toBe('helper');
    await tabTo('#prompt');
    await page.keyboard.type('DELTAS 3 hello');
    await page.keyboard.press('Control+Enter');
    const first = page.locator('.turn').nth(0);
    await first.locator('.timeline[data-ended=true]').waitFor();
    // DELTAS 3: the fake model streams three deltas, d0 d1 d2; the timeline shows them as one growing text
    expect((await first.locator('.ev-text .assistant-text').first().textContent())!.trim()).toBe('d0 d1 d2');
    expect(await first.locator('.ev-result .result-text').textContent()).toContain('d0 d1 d2');

    await page.fill('#prompt', 'CALL_TOOL fs_write {"path":"notes.md","content":"from the dashboard"}');
    await page.getByRole('button', { name: 'Send' }).click();
    const second = page.locator('.turn').nth(1);
    await second.locator('.timeline[data-ended=true]').waitFor();
    const tool = second.locator('.ev-tool');
    expect(await tool.locator('.tool-name').textContent()).toBe('fs_write');
    expect(JSON.parse((await tool.locator('.tool-input').textContent())!)).toEqual({ path: 'notes.md', content: 'from the dashboard' });
    expect(await tool.locator('.tool-output').textContent()).toContain('"bytesWritten": 18');
    expect(await second.locator('.ev-result .result-text').textContent()).toContain('TOOL-RESULT-SEEN');
    toolRunId = (await second.getAttribute('data-run'))!;
    playgroundEvents = await second.locator('.timeline > li').evaluateAll((els) => els.map((e) => `${e.getAttribute('data-kind')}: ${e.querySelector('.ev-body')?.textContent}`));
    // both turns ran in one session
    const runs = await (await h.svc.api('/api/runs')).json();
    expect(new Set(runs.map((r: any) => r.subTask.sessionId)).size).toBe(1);
    await shot('playground');
  });

  it('opens the run’s page and sees the same events', async () => {
    await page.getByRole('link', { name: `Open run ${toolRunId}` }).click();
    await expect.poll(() => heading().textContent()).toBe(`Run ${toolRunId}`);
    await page.locator('.timeline[data-ended=true]').waitFor();
    const detail = await page.locator('.timeline > li').evaluateAll((els) => els.map((e) => `${e.getAttribute('data-kind')}: ${e.querySelector('.ev-body')?.textContent}`));
    expect(detail).toEqual(playgroundEvents);
    const stored = await (await h.svc.api(`/api/runs/${toolRunId}`)).json();
    expect(stored.status).toBe('ok');
    expect(detail.filter((d) => d.startsWith('tool:'))).toHaveLength(stored.events.filter((e: any) => e.type === 'tool_call').length);
    expect(await page.locator('.facts').textContent()).toContain('ok');
    // times in the viewer's timezone
    const inTokyo = new Intl.DateTimeFormat('en-US', { dateStyle: 'medium', timeStyle: 'medium', timeZone: 'Asia/Tokyo' }).format(new Date(stored.startedAt));
    expect(await page.locator('.facts dt:text("Started") + dd').textContent()).toBe(inTokyo);
    expect(await page.locator('footer').textContent()).toBe('Times in Asia/Tokyo.');
    expect(await page.getByRole('button', { name: 'Cancel run' }).isDisabled()).toBe(true);
    await shot('run-detail');
    await go('Runs', 'Runs');
    await page.locator(`tr[data-run="${toolRunId}"]`).waitFor();
    await page.selectOption('select[name=status]', 'ok');
    await expect.poll(() => page.locator('tbody tr').count()).toBe(2);
    await shot('runs');
    // from the list to a run's page by keyboard
    await heading().focus();
    await tabTo(`tr[data-run="${toolRunId}"] a`);
    await page.keyboard.press('Enter');
    await expect.poll(() => heading().textContent()).toBe(`Run ${toolRunId}`);
  });

  it('cancels a long run from its page with the keyboard', async () => {
    const start = await h.svc.api('/api/runs', { method: 'POST', json: { profile: 'helper', prompt: 'SLOW_DELTAS 400 50' } });
    const { runId } = await start.json();
    await page.goto(`${h.svc.url}/dashboard/runs/${runId}`);
    await expect.poll(() => heading().textContent()).toBe(`Run ${runId}`);
    // text streams in while the run goes on
    await expect.poll(async () => (await page.locator('.ev-text .assistant-text').textContent().catch(() => '')) ?? '').toContain('d3');
    const cancel = page.getByRole('button', { name: 'Cancel run' });
    await expect.poll(() => cancel.isEnabled()).toBe(true);
    await tabTo('button:text("Cancel run")', 2);
    await page.keyboard.press('Enter');
    await page.locator('.timeline[data-ended=true]').waitFor();
    await expect.poll(async () => (await (await h.svc.api(`/api/runs/${runId}`)).json()).status).toBe('cancelled');
    await expect.poll(() => page.locator('.facts .status').textContent()).toBe('cancelled');
    expect(await cancel.isDisabled()).toBe(true);
    const events = (await (await h.svc.api(`/api/runs/${runId}`)).json()).events;
    expect(events.filter((e: any) => e.type === 'result' || e.type === 'error')).toHaveLength(1);
    await h.fake.when(() => h.fake.requests.find((r) => JSON.stringify(r.body).includes('SLOW_DELTAS') && r.clientClosedEarly));
    await shot('run-cancelled');
  });

  it('force-terminates a run from its page after the confirmation', async () => {
    const { runId } = await (await h.svc.api('/api/runs', { method: 'POST', json: { profile: 'helper', prompt: 'SLOW_DELTAS 400 50' } })).json();
    await page.goto(`${h.svc.url}/dashboard/runs/${runId}`);
    const terminate = page.getByRole('button', { name: 'Terminate' });
    await expect.poll(() => terminate.isEnabled()).toBe(true);
    const asked = new Promise<string>((resolve) => page.once('dialog', (d) => (resolve(d.message()), void d.accept())));
    await terminate.click();
    expect(await asked).toContain('Force-terminate this run?');
    await page.locator('.timeline[data-ended=true]').waitFor();
    await expect.poll(() => page.locator('.facts .status').textContent()).toBe('cancelled');
    const run = await (await h.svc.api(`/api/runs/${runId}`)).json();
    expect(run.status).toBe('cancelled');
    expect(run.events.filter((e: any) => e.type === 'result' || e.type === 'error')).toHaveLength(1);
  });

  it('keeps the runs list’s statuses live', async () => {
    const { runId } = await (await h.svc.api('/api/runs', { method: 'POST', json: { profile: 'helper', prompt: 'SLOW_DELTAS 400 50' } })).json();
    await go('Runs', 'Runs');
    const status = page.locator(`tr[data-run="${runId}"] .status`);
    await expect.poll(() => status.textContent()).toBe('running');
    expect((await h.svc.api(`/api/runs/${runId}`, { method: 'DELETE' })).status).toBe(204);
    // no reload: the list follows while a run it shows is running
    await expect.poll(() => status.textContent(), { timeout: 15_000 }).toBe('cancelled');
  });

  it('shows sessions and continues a session’s conversation', async () => {
    await go('Sessions', 'Sessions');
    const link = page.locator('tbody tr a').first();
    await link.waitFor();
    await link.click();
    await expect.poll(() => heading().textContent()).toMatch(/^Session sess-/);
    await page.locator('tr[data-run]').first().waitFor();
    await page.locator('#prompt').waitFor();
    await tabTo('#prompt', 40);
    await page.keyboard.type('and once more');
    await page.keyboard.press('Control+Enter');
    await page.locator('.turn .timeline[data-ended=true]').waitFor();
    expect(await page.locator('.turn .ev-result').textContent()).toContain('FAKE-REPLY: and once more');
    await shot('session');
    const sessionId = (await heading().textContent())!.replace('Session ', '');
    page.once('dialog', (d) => void d.accept());
    await page.getByRole('button', { name: 'End session' }).click();
    await expect.poll(() => heading().textContent()).toBe('Sessions');
    expect((await (await h.svc.api(`/api/sessions/${sessionId}`)).json()).status).toBe('shutdown');
    await shot('sessions');
  });

  it('issues an API key from the keyboard and shows it once', async () => {
    await go('Keys', 'API keys');
    await tabTo('#key-name', 2);
    await page.keyboard.type('from-dashboard');
    await page.keyboard.press('Enter');
    const token = (await page.locator('.secret .token').textContent())!;
    expect(token).toMatch(/^ao_test_/);
    expect((await h.svc.api('/api/whoami', { key: token })).status).toBe(200);
    await shot('keys');
    page.once('dialog', (d) => void d.accept());
    await page.getByRole('button', { name: 'Revoke key from-dashboard' }).click();
    await expect.poll(async () => (await h.svc.api('/api/whoami', { key: token })).status).toBe(401);
    await expect.poll(() => page.locator('tr', { hasText: 'from-dashboard' }).locator('.status').textContent()).toBe('revoked');
  });

  it('publishes an agent, issues an agent key, and draws its metrics', async () => {
    await go('Published agents', 'Published agents');
    await expect.poll(() => page.getByRole('button', { name: 'Publish', exact: true }).isEnabled()).toBe(true);
    await tabTo('#pub-profile', 2);
    await page.locator('#pub-visibility').selectOption('private');
    await page.locator('#pub-visibility').focus();
    await tabTo('button:text("Publish")', 1);
    await page.keyboard.press('Enter');
    const agent = page.locator('section.agent');
    await agent.waitFor();
    expect(await agent.locator('h2').textContent()).toContain('helper');
    await agent.locator('.chart canvas').waitFor();
    await agent.locator('input[name=label]').fill('website');
    await agent.getByRole('button', { name: 'Issue agent key' }).click();
    expect(await agent.locator('.secret .token').textContent()).toMatch(/^pk_/);
    await shot('published');
  });

  it('creates an automation, runs it now and shows its firing', async () => {
    await go('Automations', 'Automations');
    await page.fill('#a-name', 'nightly');
    await page.fill('#a-profile', 'helper');
    await page.fill('#a-cron', '0 3 * * *');
    await page.fill('#a-prompt', 'tidy up');
    await page.getByRole('button', { name: 'Create automation' }).click();
    await page.getByRole('link', { name: 'nightly' }).click();
    await expect.poll(() => heading().textContent()).toBe('Automation nightly');
    await tabTo('button:text("Run now")', 2);
    await page.keyboard.press('Enter');
    await page.locator('table a[href^="/dashboard/runs/"]').first().waitFor();
    await page.fill('#memory', 'the queue was empty at 3');
    await page.getByRole('button', { name: 'Save memory' }).click();
    await expect.poll(() => page.locator('#memory ~ p, .field + p.muted').first().textContent()).toContain('Updated');
    const automation = (await (await h.svc.api('/api/automations')).json()).find((a: any) => a.name === 'nightly');
    expect(automation.timezone).toBe('Asia/Tokyo'); // the schedule reads in the viewer's timezone
    expect((await (await h.svc.api(`/api/automations/${automation.id}/memory`)).json()).body).toBe('the queue was empty at 3');
    await shot('automation');
    await go('Automations', 'Automations');
    await shot('automations');
  });

  it('keeps a memory store: adds an entry, edits it, finds it, and restores an earlier version', async () => {
    await go('Memory', 'Memory');
    await page.fill('#m-name', 'notes');
    await page.fill('#m-description', 'What we learnt about customers');
    await page.getByRole('button', { name: 'Create store' }).click();
    await page.getByRole('link', { name: 'notes', exact: true }).click();
    await expect.poll(() => heading().textContent()).toBe('Memory store notes');
    await page.fill('#m-path', '/customers/acme.md');
    await page.fill('#m-content', 'Acme prefers email.');
    await page.getByRole('button', { name: 'Add entry' }).click();
    await page.locator('#m-edit').waitFor();
    await page.fill('#m-edit', 'Acme prefers phone calls.');
    await page.getByRole('button', { name: 'Save entry' }).click();
    await expect.poll(() => page.locator('label[for="m-edit"]').textContent()).toContain('version 2');
    await page.fill('#m-q', 'phone');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await expect.poll(() => page.locator('.hits').textContent()).toContain('«phone»');
    await page.getByRole('button', { name: 'Restore version 1' }).click();
    await expect.poll(() => page.locator('#m-edit').inputValue()).toBe('Acme prefers email.');
    expect(await (await h.svc.api('/api/memory-stores/notes/entries/customers/acme.md')).json()).toMatchObject({ content: 'Acme prefers email.', version: 3 });
    await shot('memory-store');
    await go('Memory', 'Memory');
    await expect.poll(() => page.locator('main table').textContent()).toContain('What we learnt about customers');
    await shot('memory');
  });

  it('creates a webhook endpoint showing its secret once, sends it a test event and shows the delivery', async () => {
    const receiver = createServer((req, res) => req.resume().on('end', () => res.writeHead(204).end()));
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/dashboard-hook`;
    try {
      await go('Webhooks', 'Webhooks');
      await page.fill('#w-url', url);
      await page.fill('#w-events', 'run.*, webhook.test');
      await page.fill('#w-description', 'ops alerts');
      await page.getByRole('button', { name: 'Create endpoint' }).click();
      await expect.poll(() => page.locator('[role=status]').textContent()).toMatch(/shown this once.*whsec_/);
      await shot('webhooks');
      await page.getByRole('link', { name: url, exact: true }).click();
      await expect.poll(() => heading().textContent()).toBe(`Webhook ${url}`);
      await page.getByRole('button', { name: 'Send test event' }).click();
      // the page reads its log again while a delivery is pending
      await expect.poll(() => page.locator('main table').textContent(), { timeout: 20_000 }).toMatch(/webhook\.test.*delivered/);
      await shot('webhook');
    } finally {
      receiver.closeAllConnections();
      await new Promise<void>((r) => receiver.close(() => r()));
    }
  });

  it('shows a profile’s history and usage, and pins it', async () => {
    await go('Profiles', 'Profiles');
    await page.getByRole('link', { name: 'helper', exact: true }).click();
    await expect.poll(() => heading().textContent()).toBe('Profile helper');
    // two versions: created, then the tools added from the form
    const latest = page.locator('ol.history > li').first();
    await latest.waitFor();
    expect(await page.locator('ol.history > li').count()).toBe(2);
    expect(await latest.textContent()).toMatch(/tools: — → \[\s*"fs_read",\s*"fs_write"\s*\]/);
    const usage = await (await h.svc.api('/api/profiles/helper/usage?window=30d')).json();
    expect(usage.runs).toBeGreaterThan(0);
    await expect.poll(() => page.locator('[data-testid=usage] .big').first().textContent()).toBe(String(usage.runs));
    await page.getByRole('button', { name: 'Pin', exact: true }).click();
    await page.getByRole('button', { name: 'Unpin', exact: true }).waitFor();
    expect((await (await h.svc.api('/api/profiles/helper')).json()).pinned).toBe(true);
    await shot('profile-history-usage');
  });

  it('starts a workflow and draws its DAG, the node colours following the live plan stream', async () => {
    await go('Workflows', 'Workflows');
    await page.fill('#wf-name', 'report');
    await page.fill('#wf-nodes', JSON.stringify([
      { id: 'research', profile: 'helper', prompt: 'SLOW_DELTAS 40 50' },
      { id: 'write', profile: 'helper', prompt: 'DELTAS 2 write it', dependsOn: ['research'] },
    ]));
    await page.locator('#wf-nodes').focus();
    await tabTo('button:text("Start workflow")', 1);
    await page.keyboard.press('Enter');
    await expect.poll(() => heading().textContent()).toBe('Workflow report');
    const node = (id: string) => page.locator(`svg.dag g[data-node=${id}]`);
    // while the first node runs, the second waits; both colours come from the stream
    await page.locator('svg.dag g[data-node=research][data-status=running]').waitFor();
    expect(await node('write').getAttribute('data-status')).toBe('pending');
    const fill = (id: string) => node(id).locator('rect').evaluate((el) => getComputedStyle(el).fill);
    expect(await fill('research')).toBe('rgb(230, 239, 255)');
    await shot('workflow-running');
    await page.locator('svg.dag g[data-node=write][data-status=ok]').waitFor();
    expect(await node('research').getAttribute('data-status')).toBe('ok');
    expect(await fill('write')).toBe('rgb(227, 244, 234)');
    await expect.poll(() => page.locator('.facts .status').textContent()).toBe('completed');
    expect(await page.locator('svg.dag path.edge').count()).toBe(1);
    const id = new URL(page.url()).pathname.split('/').at(-1)!;
    expect((await (await h.svc.api(`/api/workflows/runs/${id}`)).json()).workflowRun).toMatchObject({ statusLabel: 'completed', nodes: [{ id: 'research', statusLabel: 'ok' }, { id: 'write', statusLabel: 'ok' }] });
    await shot('workflow');
    await go('Workflows', 'Workflows');
    await page.locator(`tr[data-workflow="${id}"]`).waitFor();
    await shot('workflows');
  });

  it('shows billing and the overview with its charts, at laptop and phone widths', async () => {
    await go('Billing', 'Billing');
    // this server runs without billing (SVC_BILLING off): the wallet card says so instead of a balance
    await expect.poll(() => page.locator('[data-testid=wallet]').textContent()).toContain('no billing client');
    await page.locator('#cap').waitFor();
    await tabTo('#cap');
    await page.keyboard.type('25');
    await page.keyboard.press('Enter');
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    expect((await (await h.svc.api('/api/spend-cap')).json()).month).toMatchObject({ limit_usd_cents: 2500, user_set: true });
    await shot('billing');
    await go('Overview', 'Overview');
    await expect.poll(() => page.locator('[data-testid=runs-24h]').textContent()).not.toBe('0');
    await page.locator('.chart canvas').nth(1).waitFor();
    await shot('overview');
    // a phone (375 px, the narrowest common one): every page of the navigation fits, nothing scrolls sideways
    await page.setViewportSize({ width: 375, height: 812 });
    await page.reload();
    await page.locator('.chart canvas').first().waitFor();
    const nav = page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link');
    const pages = await nav.evaluateAll((links) => links.map((a) => [a.textContent!.trim(), a.getAttribute('href')!] as const));
    expect(pages.length).toBeGreaterThan(8);
    const wide: string[] = [];
    const fits = async (name: string) => {
      const width = await page.evaluate(() => document.documentElement.scrollWidth);
      if (width > 375) wide.push(`${name}: ${width} px`);
      await shot(`${name}-375`);
    };
    for (const [label, href] of pages) {
      await nav.filter({ hasText: label }).first().click();
      await page.waitForURL((u) => u.pathname === href);
      await expect.poll(() => heading().textContent()).not.toBe('');
      await page.waitForLoadState('networkidle');
      await fits(href.split('/').pop() || 'overview');
    }
    // the pages under them too: a run, a profile, an automation, a workflow and a memory store
    for (const [list, link] of [['/dashboard/runs', 'main table a'], ['/dashboard/profiles', 'main table a'], ['/dashboard/automations', 'main table a'], ['/dashboard/workflows', 'main table a'], ['/dashboard/memory', 'main table a']] as const) {
      await page.goto(h.svc.url + list);
      // the list is drawn from what the page fetches: click a row's link once it is there, not the loading shell's
      await page.waitForLoadState('networkidle');
      await page.locator(link).first().click();
      await page.waitForURL((u) => u.pathname.startsWith(list + '/'));
      await page.waitForLoadState('networkidle');
      await fits(`${list.split('/').pop()}-detail`);
    }
    expect(wide).toEqual([]);
  });

  it('acts with the signed-in key’s role: a member sees the API’s refusal to publish, then signs out', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/dashboard\/sign-in/);
    await page.fill('input[name=key]', await h.mintKey('default', 'member'));
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/dashboard$/);
    await go('Published agents', 'Published agents');
    await expect.poll(() => page.locator('header.top .who').textContent()).toContain('member');
    await page.locator('#pub-profile').selectOption('helper');
    await page.getByRole('button', { name: 'Publish', exact: true }).click();
    await expect.poll(() => page.getByRole('alert').first().textContent()).toContain('needs role admin or owner');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/dashboard\/sign-in/);
    expect((await page.goto(`${h.svc.url}/dashboard/runs`))?.url()).toContain('/dashboard/sign-in');
  });

  it('lets the session call /api as its key: reads with the cookie, writes only with the CSRF token from the page', async () => {
    const dash = await dashboardSession(h.svc.url, h.svc.key);
    const shell = await dash.get('/dashboard/profiles');
    expect(shell.status).toBe(200);
    expect(shell.headers.get('content-security-policy')).toContain("script-src 'self' 'nonce-");
    const csrf = /name="csrf-token" content="([^"]+)"/.exec(await shell.text())![1];
    const call = (path: string, init: RequestInit = {}) => fetch(h.svc.url + path, { ...init, headers: { cookie: dash.cookie, 'content-type': 'application/json', ...init.headers } });
    expect(await (await call('/api/whoami')).json()).toMatchObject({ tenantId: 'default', role: 'owner', authKind: 'session' });
    const body = JSON.stringify({ name: 'via-cookie', runtime: 'general', model: 'demo:echo' });
    const noToken = await call('/api/profiles', { method: 'POST', body });
    expect(noToken.status).toBe(403);
    expect(await noToken.json()).toEqual({ error: 'missing or wrong x-csrf-token header for a dashboard session' });
    expect((await call('/api/profiles', { method: 'POST', body, headers: { 'x-csrf-token': 'forged' } })).status).toBe(403);
    expect((await call('/api/profiles', { method: 'POST', body, headers: { 'x-csrf-token': csrf, origin: 'https://evil.example' } })).status).toBe(403);
    expect((await call('/api/whoami', { headers: { 'sec-fetch-site': 'cross-site' } })).status).toBe(401);
    expect((await h.svc.api('/api/profiles/via-cookie')).status).toBe(404);
    expect((await call('/api/profiles', { method: 'POST', body, headers: { 'x-csrf-token': csrf } })).status).toBe(201);
    // a bearer wins over the cookie; a forged cookie is no credential
    expect((await call('/api/whoami', { headers: { authorization: 'Bearer ao_test_wrongwrongwrongwrongwrong0' } })).status).toBe(401);
    expect((await fetch(`${h.svc.url}/api/whoami`, { headers: { cookie: 'svc_dash=e30.forged' } })).status).toBe(401);
    // the vendor modules come from node_modules through the conductor
    const preact = await fetch(`${h.svc.url}/dashboard/assets/preact.mjs`);
    expect(preact.headers.get('content-type')).toContain('text/javascript');
    expect(await preact.text()).toContain('createElement');
    const etag = preact.headers.get('etag')!;
    expect(preact.headers.get('cache-control')).toBe('no-cache');
    expect((await fetch(`${h.svc.url}/dashboard/assets/preact.mjs`, { headers: { 'if-none-match': etag } })).status).toBe(304);
    expect((await fetch(`${h.svc.url}/dashboard/assets/..%2Fsession.ts`)).status).toBe(404);
  });

  it('logged no console error and fetched nothing off-site', async () => {
    // the expected refusals the pages show as the API's messages (the refused model, the member's publish, the wallet of a
    // server without billing) are no script errors
    // (each at most as often as the walk opens its page: billing twice, the second time at phone width)
    const expected: Array<[RegExp, number]> = [
      [/\/dashboard\/profiles\/new: Failed to load resource: the server responded with a status of 400/, 1],
      [/\/dashboard\/profiles\/helper: Failed to load resource: the server responded with a status of 400/, 1],
      [/\/dashboard\/published: Failed to load resource: the server responded with a status of 403/, 1],
      [/\/dashboard\/billing: Failed to load resource: the server responded with a status of 503/, 2],
    ];
    expect(consoleErrors.filter((e) => !expected.some(([x]) => x.test(e)))).toEqual([]);
    for (const [x, times] of expected) expect(consoleErrors.filter((e) => x.test(e)).length, String(x)).toBeLessThanOrEqual(times);
    expect(offsite).toEqual([]);
  });
});
