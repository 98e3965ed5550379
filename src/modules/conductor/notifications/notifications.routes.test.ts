import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { withTenant } from '../../../db/index.ts';
import { createLogger } from '../../../shared/log.ts';
import { createSecretBox } from '../../../shared/secret-box.ts';
import { createJobs, type Jobs } from '../jobs/index.ts';
import { capabilityBundleRoutes } from '../toolkit/index.ts';
import { testApi, type TestApi } from '../toolkit/api.fixture.ts';
import { notificationRoutes, webhookRoutes } from './index.ts';
import { createDeliverer } from './deliver.ts';
import { DELIVER_QUEUE } from './notify.service.ts';
import { WEBHOOK_QUEUE } from './outbox.ts';
import { createWebhookDeliverer } from './webhook-deliver.ts';
import { createGuardedFetch, POLICY_NOTE } from '../../../shared/egress/index.ts';

/** The routes with no SMTP server configured (deliveries themselves: test/flows/notifications.test.ts). */
let api: TestApi;
let jobs: Jobs;
const box = createSecretBox('notifications-test-secrets-key');
const config = { smtpUrl: undefined, smtpFrom: 'svc@localhost', retryLimit: 0, retryDelaySeconds: 0, timeoutMs: 1000, webhookSchedule: [0], webhookDisableAfterSeconds: 86_400, webhookRotationOverlapSeconds: 3600 };
beforeAll(async () => {
  api = await testApi((app, database) => {
    jobs = createJobs({ database, log: createLogger('test') });
    app.route('/api/notifications', notificationRoutes({ db: database.db, jobs, config, box, privateAddresses: 'allow' }));
    app.route('/api/webhooks', webhookRoutes({ db: database.db, jobs, config, box, privateAddresses: 'allow' }));
    // as a server outside dev is configured by default
    app.route('/strict/notifications', notificationRoutes({ db: database.db, jobs, config, box, privateAddresses: 'deny' }));
    app.route('/api/capability-bundles', capabilityBundleRoutes());
  });
  // the real deliverer: its attempts fail here (nothing listens on port 9), so deliveries stay queued, then fail
  await jobs.define(DELIVER_QUEUE, createDeliverer({ db: api.database.db, config, log: createLogger('test'), box, fetch: createGuardedFetch({ privateAddresses: 'allow' }) }));
  await jobs.define(WEBHOOK_QUEUE, createWebhookDeliverer({ db: api.database.db, jobs, config, log: createLogger('test'), box, fetch: createGuardedFetch({ privateAddresses: 'allow' }) }));
  await jobs.start();
});
afterAll(async () => {
  await jobs?.stop();
  await api?.close();
});

describe('notifications', () => {
  it('stores a notification nobody can receive as undeliverable, says why, and names the run that asked', async () => {
    const res = await api.request('POST', '/api/notifications', {
      as: { authKind: 'run_token', role: 'member', subject: 'run:run_abc' },
      json: { to: 'ops@example.com', subject: 'Done', message: 'The report is ready.' },
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^ntf_/),
      channel: 'email',
      to: 'ops@example.com',
      subject: 'Done',
      message: 'The report is ready.',
      status: 'undeliverable',
      detail: 'stored, not delivered: no SMTP server is configured (SVC_SMTP_URL); no webhook takes notify',
      event: 'notify',
      runId: 'run_abc',
      createdAt: expect.any(String),
      deliveries: [],
    });
    expect((await api.request('GET', `/api/notifications/${res.body.id}`)).body).toEqual(res.body);
  });

  it('lists the tenant\'s notifications newest first and hides them from other tenants', async () => {
    await api.request('POST', '/api/notifications', { json: { message: 'one', channel: 'inbox' } });
    await api.request('POST', '/api/notifications', { json: { message: 'two', channel: 'inbox' } });
    const mine = (await api.request('GET', '/api/notifications')).body.map((n: any) => n.message);
    expect(mine.slice(0, 2)).toEqual(['two', 'one']);
    expect((await api.request('GET', '/api/notifications', { as: { tenantId: 'globex' } })).body).toEqual([]);
  });

  it('refuses an empty message and a malformed channel with 400', async () => {
    expect((await api.request('POST', '/api/notifications', { json: { message: '' } })).body.error).toMatch(/^message: /);
    expect((await api.request('POST', '/api/notifications', { json: { message: 'x', channel: 'E-Mail!' } })).body.error).toMatch(/^channel: /);
  });
});

describe('notification settings', () => {
  it('reads the defaults before anything is set', async () => {
    expect((await api.request('GET', '/api/notifications/settings', { as: { tenantId: 'globex' } })).body).toEqual({ email: { enabled: true, to: [], from: null }, webhooks: [] });
  });

  it('lets an admin set them, shows a new webhook\'s secret once, keeps it on a later PUT, and never shows it on GET', async () => {
    const put = await api.request('PUT', '/api/notifications/settings', {
      as: { role: 'admin' },
      json: { email: { to: ['ops@example.com'], from: 'svc@example.com' }, webhooks: [{ url: 'https://hooks.example.com/svc', events: ['run.failed'] }] },
    });
    expect(put.status).toBe(200);
    const hook = put.body.webhooks[0];
    expect(put.body).toEqual({
      email: { enabled: true, to: ['ops@example.com'], from: 'svc@example.com' },
      webhooks: [{ id: expect.stringMatching(/^whk_/), url: 'https://hooks.example.com/svc', secret: expect.stringMatching(/^whsec_/), events: ['run.failed'], description: '', enabled: true, disabledReason: null }],
    });
    const { secret, ...shown } = hook;
    // an empty event list is what it always meant: every notification event
    const again = await api.request('PUT', '/api/notifications/settings', { json: { ...put.body, webhooks: [{ id: hook.id, url: hook.url, events: [] }] } });
    const every = ['notify', 'run.failed', 'automation.disabled', 'workflow.paused', 'credit.low'];
    expect(again.body.webhooks).toEqual([{ ...shown, events: every }]);
    for (const role of ['member', 'admin', 'owner'] as const) {
      expect((await api.request('GET', '/api/notifications/settings', { as: { role } })).body.webhooks).toEqual([{ ...shown, events: every }]);
    }
    // the same endpoint is on /api/webhooks; at rest its secret is sealed
    expect((await api.request('GET', `/api/webhooks/${hook.id}`)).body).toMatchObject({ id: hook.id, url: hook.url, events: every });
    const stored = await withTenant(api.database.db, 'acme', async (tx) => (await sql<{ secret: string }>`select secret from webhook_endpoints`.execute(tx)).rows[0].secret);
    expect(stored).toMatch(/^v1\./);
    expect(stored).not.toContain(secret);
  });

  it('refuses a member with 403 and bad settings with 400 naming the field', async () => {
    expect(await api.request('PUT', '/api/notifications/settings', { as: { role: 'member' }, json: {} })).toMatchObject({ status: 403, body: { error: 'notification settings needs role admin or owner' } });
    expect((await api.request('PUT', '/api/notifications/settings', { json: { email: { to: ['not an address'] } } })).body.error).toMatch(/^email\.to\.0: an email address/);
    expect((await api.request('PUT', '/api/notifications/settings', { json: { webhooks: [{ url: 'ftp://x' }] } })).body.error).toMatch(/^webhooks\.0\.url: /);
    expect((await api.request('PUT', '/api/notifications/settings', { json: { webhooks: [{ url: 'https://x.example', events: ['nope'] }] } })).body.error).toMatch(/^webhooks\.0\.events\.0: .*run\.failed/);
    expect((await api.request('PUT', '/api/notifications/settings', { json: { webhooks: [{ url: 'https://x.example', secret: 'plain' }] } })).body.error).toMatch(/^webhooks\.0\.secret: /);
  });

  it('refuses webhooks on internal addresses where the operator says so', async () => {
    const res = await api.request('PUT', '/strict/notifications/settings', { json: { webhooks: [{ url: 'https://hooks.example.com/a' }, { url: 'http://169.254.169.254/latest' }] } });
    expect(res).toMatchObject({ status: 400, body: { error: `webhooks.1.url: 169.254.169.254 is a link-local address; ${POLICY_NOTE}` } });
  });

  it('queues a delivery to each webhook that wants the event and leaves the others out', async () => {
    await api.request('PUT', '/api/notifications/settings', {
      as: { tenantId: 'globex' },
      json: { email: { enabled: false }, webhooks: [{ url: 'http://127.0.0.1:9/a', events: ['notify'] }, { url: 'http://127.0.0.1:9/b', events: ['run.failed'] }] },
    });
    const res = await api.request('POST', '/api/notifications', { as: { tenantId: 'globex' }, json: { message: 'hi' } });
    expect(res.body).toMatchObject({ status: 'queued', detail: '1 delivery queued', deliveries: [{ channel: 'webhook', target: 'http://127.0.0.1:9/a', status: 'queued', attempts: 0 }] });
  });
});

describe('capability bundles', () => {
  it('lists the tool selectors a profile may use with the tools each grants', async () => {
    const { body } = await api.request('GET', '/api/capability-bundles');
    expect(body.bundles.map((b: any) => b.value)).toEqual(['@default', '@files', '@files-read', '@exec', '@delegate', '@notify', '@all']);
    expect(body.bundles[0]).toEqual({ value: '@default', label: 'Default (safe)', description: expect.any(String), tools: ['fs_read', 'fs_write', 'fs_edit', 'fs_list', 'fs_search'] });
  });
});
