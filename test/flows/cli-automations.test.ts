import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestSvc, type TestSvc } from '../support/svc.ts';
import { cli, tempDir } from '../support/cli.ts';

/** `svc automations …` through the real binary against an in-process server. */
const OWNER = 'ao_test_bootstrapbootstrapbootstrap01';

describe('svc automations', () => {
  let svc: TestSvc;
  let env: Record<string, string>;
  beforeAll(async () => {
    svc = await startTestSvc({}, 'all');
    env = { SVC_CONFIG_DIR: tempDir(), SVC_API_URL: svc.url, SVC_API_KEY: OWNER };
    expect((await svc.api('/api/profiles', { method: 'POST', json: { name: 'demo', runtime: 'general', model: 'demo:echo' } })).status).toBe(201);
  });
  afterAll(async () => {
    await svc?.stop();
  });

  it('creates, lists, stops, starts, runs, lists firings and keeps a memory note', async () => {
    const created = (await cli(['automations', 'create', 'nightly', '--profile', 'demo', '--cron', '0 2 * * *', '--prompt', 'tidy up', '--timezone', 'Europe/Paris', '--json'], env)).json();
    expect(created).toMatchObject({ name: 'nightly', status: 'active', timezone: 'Europe/Paris' });
    const listed = await cli(['automations', 'list'], env);
    expect(listed.stdout).toContain(`${created.id}\tnightly\tdemo\t0 2 * * *\tEurope/Paris\tactive\t`);
    expect((await cli(['automations', 'stop', created.id, '--json'], env)).json()).toMatchObject({ status: 'stopped', nextRunAt: null });
    expect((await cli(['automations', 'start', created.id, '--json'], env)).json()).toMatchObject({ status: 'active', nextRunAt: created.nextRunAt });
    // by its name, as a person types it
    expect((await cli(['automations', 'stop', 'nightly', '--json'], env)).json()).toMatchObject({ id: created.id, status: 'stopped' });
    expect((await cli(['automations', 'start', 'nightly', '--json'], env)).json()).toMatchObject({ id: created.id, status: 'active' });
    const nameless = await cli(['automations', 'run', 'nobody'], env);
    expect(nameless.code).toBe(4);
    expect(nameless.stderr).toContain('no automation named nobody');
    const firing = (await cli(['automations', 'run', created.id, '--json'], env)).json();
    expect(firing).toMatchObject({ automationId: created.id, runId: expect.stringMatching(/^run_/) });
    await vi.waitFor(async () => expect((await cli(['automations', 'firings', created.id, '--json'], env)).json()).toMatchObject([{ id: firing.id, outcome: 'ok' }]), { timeout: 15_000, interval: 200 });
    expect((await cli(['automations', 'memory', created.id, '--set', 'remember me', '--json'], env)).json()).toMatchObject({ body: 'remember me' });
    expect((await cli(['automations', 'memory', 'nightly'], env)).stdout).toContain('remember me');
  });

  it('reports a bad cron as the server says it', async () => {
    const r = await cli(['automations', 'create', 'never', '--profile', 'demo', '--cron', '0 0 30 2 *'], env);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/cron: .*never fires/);
  });
});
