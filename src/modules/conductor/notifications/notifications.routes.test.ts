import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capabilityBundleRoutes } from '../toolkit/index.ts';
import { testApi, type TestApi } from '../toolkit/api.fixture.ts';
import { NO_PROVIDER_DETAIL, notificationRoutes } from './index.ts';

let api: TestApi;
beforeAll(async () => {
  api = await testApi((app, database) => {
    app.route('/api/notifications', notificationRoutes({ db: database.db }));
    app.route('/api/capability-bundles', capabilityBundleRoutes());
  });
});
afterAll(() => api.close());

describe('notifications', () => {
  it('stores a notification as queued, says why, and names the run that asked', async () => {
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
      status: 'queued',
      detail: NO_PROVIDER_DETAIL,
      runId: 'run_abc',
      createdAt: expect.any(String),
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

describe('capability bundles', () => {
  it('lists the tool selectors a profile may use with the tools each grants', async () => {
    const { body } = await api.request('GET', '/api/capability-bundles');
    expect(body.bundles.map((b: any) => b.value)).toEqual(['@default', '@files', '@files-read', '@exec', '@delegate', '@notify', '@all']);
    expect(body.bundles[0]).toEqual({ value: '@default', label: 'Default (safe)', description: expect.any(String), tools: ['fs_read', 'fs_write', 'fs_edit', 'fs_list', 'fs_search'] });
  });
});
