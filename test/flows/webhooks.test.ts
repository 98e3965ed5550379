import { EventEmitter } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { withSystem, withTenant } from '../../src/db/index.ts';
import { lockDelivery } from '../../src/modules/conductor/notifications/deliveries.repo.ts';
import { markEndpointHealth } from '../../src/modules/conductor/notifications/endpoints.repo.ts';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.ts';
import type { TestSvc } from '../support/svc.ts';
import { keyOf, startOperatorSvc } from '../support/tenants.ts';

/**
 * Webhooks for what happens, through one `all` instance and a real receiver on 127.0.0.1: endpoints with one-time
 * secrets and roles, the event catalogue from real runs, and delivery (Standard Webhooks signatures verified with the
 * `standardwebhooks` package, retries on a short schedule, 410, rotation). SVC_WEBHOOK_SCHEDULE_S=0,1,3: attempts at
 * once, a second later, three seconds after that; SVC_WEBHOOK_DISABLE_AFTER_S=2 stands for the 3 days after which an
 * endpoint failing every attempt is disabled. Every wait is on an arrival or a state the API shows.
 */
interface Hit {
  path: string;
  headers: Record<string, string>;
  body: string;
  at: number;
}
const WAIT = { timeout: 20_000, interval: 100 };
const arrivals = new EventEmitter();
const hits: Hit[] = [];
const until = <T>(probe: () => T | undefined | false): Promise<T> =>
  new Promise((resolve) => {
    const check = () => {
      const v = probe();
      if (v) {
        arrivals.off('arrival', check);
        resolve(v);
      }
    };
    arrivals.on('arrival', check);
    check();
  });
const arrived = (path: string, eventId?: string) => hits.filter((h) => h.path === path && (!eventId || h.headers['webhook-id'] === eventId));

/** `/flaky` answers 500 to the first two attempts of each event, `/gone` 410, `/down` 503 until `downIsUp`. */
const attemptsOf = new Map<string, number>();
let downIsUp = false;
let receiver: Server;
let base: string;
let svc: TestSvc;
let fake: FakeProvider;
let member: string;
let viewer: string;
let admin: string;
let other: string;

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      hits.push({ path: req.url ?? '/', headers: req.headers as Record<string, string>, body, at: Date.now() });
      const key = `${req.url}:${req.headers['webhook-id']}`;
      attemptsOf.set(key, (attemptsOf.get(key) ?? 0) + 1);
      const status = req.url === '/flaky' && attemptsOf.get(key)! <= 2 ? 500 : req.url === '/gone' ? 410 : req.url === '/down' && !downIsUp ? 503 : 200;
      res.writeHead(status).end();
      arrivals.emit('arrival');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  fake = await startFakeProvider();
  svc = await startOperatorSvc({ SVC_WEBHOOK_SCHEDULE_S: '0,1,3', SVC_WEBHOOK_DISABLE_AFTER_S: '2', OPENAI_COMPATIBLE_BASE_URL: fake.url, OPENAI_COMPATIBLE_API_KEY: 'x' }, 'all');
  [member, viewer, admin, other] = await Promise.all([keyOf(svc, 'default', 'member'), keyOf(svc, 'default', 'viewer'), keyOf(svc, 'default', 'admin'), keyOf(svc, 'initech', 'owner')]);
});
afterAll(async () => {
  await svc?.stop();
  await fake?.close();
  await new Promise<void>((r) => (receiver ? (receiver.closeAllConnections(), receiver.close(() => r())) : r()));
});

const call = async (method: string, path: string, json?: unknown, key?: string) => {
  const res = await svc.api(path, { method, ...(json !== undefined ? { json } : {}), ...(key ? { key } : {}) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
};
const create = async (path: string, events: string[], key?: string) => {
  const res = await call('POST', '/api/webhooks', { url: `${base}${path}`, events, description: `receiver ${path}` }, key);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string; secret: string; url: string };
};
const deliveries = async (id: string) => (await call('GET', `/api/webhooks/${id}/deliveries`)).body as any[];

describe('webhook endpoints', () => {
  it('shows a new endpoint its secret once: not in any GET, the notification settings included', async () => {
    const made = await call('POST', '/api/webhooks', { url: `${base}/hooks`, events: ['run.*', 'webhook.test'], description: 'ops' }, admin);
    expect(made.status).toBe(201);
    expect(made.body).toEqual({
      id: expect.stringMatching(/^whk_/),
      url: `${base}/hooks`,
      description: 'ops',
      events: ['run.*', 'webhook.test'],
      enabled: true,
      disabledReason: null,
      failingSince: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      secret: expect.stringMatching(/^whsec_/),
    });
    const { secret, ...shown } = made.body;
    expect((await call('GET', `/api/webhooks/${shown.id}`)).body).toEqual(shown);
    expect((await call('GET', '/api/webhooks')).body).toContainEqual(shown);
    const settings = await call('GET', '/api/notifications/settings');
    expect(settings.body.webhooks).toContainEqual({ id: shown.id, url: shown.url, events: shown.events, description: 'ops', enabled: true, disabledReason: null });
    for (const path of ['/api/webhooks', `/api/webhooks/${shown.id}`, '/api/notifications/settings']) expect(JSON.stringify((await call('GET', path)).body)).not.toContain(secret);

    const patched = await call('PATCH', `/api/webhooks/${shown.id}`, { description: 'ops team', events: ['run.completed'] });
    expect(patched.body).toMatchObject({ id: shown.id, description: 'ops team', events: ['run.completed'] });
    expect(patched.body.secret).toBeUndefined();
    expect((await call('DELETE', `/api/webhooks/${shown.id}`)).status).toBe(204);
    expect(await call('GET', `/api/webhooks/${shown.id}`)).toEqual({ status: 404, body: { error: `unknown webhook: ${shown.id}` } });
  });

  it('lets admins and owners change endpoints, members read them, and refuses viewers', async () => {
    const hook = await create('/roles', ['webhook.test'], admin);
    expect((await call('GET', '/api/webhooks', undefined, member)).status).toBe(200);
    expect((await call('GET', `/api/webhooks/${hook.id}/deliveries`, undefined, member)).status).toBe(200);
    expect(await call('POST', '/api/webhooks', { url: `${base}/x`, events: ['*'] }, member)).toEqual({ status: 403, body: { error: 'changing webhooks needs role admin or owner' } });
    expect((await call('POST', `/api/webhooks/${hook.id}/rotate-secret`, undefined, member)).status).toBe(403);
    expect((await call('DELETE', `/api/webhooks/${hook.id}`, undefined, member)).status).toBe(403);
    expect(await call('GET', '/api/webhooks', undefined, viewer)).toEqual({ status: 403, body: { error: 'webhooks needs role member or higher' } });
    expect((await call('GET', `/api/webhooks/${hook.id}`, undefined, viewer)).status).toBe(403);
    expect((await call('DELETE', `/api/webhooks/${hook.id}`, undefined, admin)).status).toBe(204);
  });

  it("answers 404 for another tenant's endpoints and deliveries, and lists none of them", async () => {
    const hook = await create('/mine', ['webhook.test']);
    const sent = await call('POST', `/api/webhooks/${hook.id}/test`);
    expect(sent.status).toBe(202);
    await until(() => arrived('/mine').length > 0);
    expect((await call('GET', '/api/webhooks', undefined, other)).body).toEqual([]);
    for (const [method, path, json] of [
      ['GET', `/api/webhooks/${hook.id}`],
      ['PATCH', `/api/webhooks/${hook.id}`, { enabled: false }],
      ['DELETE', `/api/webhooks/${hook.id}`],
      ['POST', `/api/webhooks/${hook.id}/test`],
      ['POST', `/api/webhooks/${hook.id}/rotate-secret`],
      ['GET', `/api/webhooks/${hook.id}/deliveries`],
      ['GET', `/api/webhooks/${hook.id}/deliveries/${sent.body.id}`],
      ['POST', `/api/webhooks/${hook.id}/deliveries/${sent.body.id}/retry`],
    ] as const) {
      expect(await call(method, path, json, other), `${method} ${path}`).toEqual({ status: 404, body: { error: `unknown webhook: ${hook.id}` } });
    }
    // its own endpoint cannot reach our delivery either
    const theirs = await create('/theirs', ['webhook.test'], other);
    expect((await call('GET', `/api/webhooks/${theirs.id}/deliveries/${sent.body.id}`, undefined, other)).status).toBe(404);
    expect((await call('POST', `/api/webhooks/${theirs.id}/deliveries/${sent.body.id}/retry`, undefined, other)).status).toBe(404);
  });

  it('deletes an endpoint while an attempt of one of its deliveries is being recorded: the delete waits for it', async () => {
    const hook = await create('/recorded', ['webhook.test']);
    const sent = await call('POST', `/api/webhooks/${hook.id}/test`);
    await vi.waitFor(async () => expect((await deliveries(hook.id))[0]?.status).toBe('delivered'), WAIT);
    const db = svc.server.built.database!.db;
    const waitingOnLocks = async () => (await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()`.execute(db)).rows[0]!.n;
    let deleted: ReturnType<typeof call> | undefined;
    // what recording an attempt does, in one transaction: lock the delivery, then mark the endpoint's health
    await withTenant(db, 'default', async (tx) => {
      expect(await lockDelivery(tx, sent.body.id)).toBeDefined();
      deleted = call('DELETE', `/api/webhooks/${hook.id}`);
      await vi.waitFor(async () => expect(await waitingOnLocks()).toBeGreaterThan(0), WAIT);
      await markEndpointHealth(tx, hook.id, true);
    });
    expect((await deleted!).status).toBe(204);
    expect((await call('GET', `/api/webhooks/${hook.id}`)).status).toBe(404);
  });

  it('refuses bad endpoints with 400 naming the field', async () => {
    expect((await call('POST', '/api/webhooks', { url: `${base}/x` })).body.error).toMatch(/^events: /);
    expect((await call('POST', '/api/webhooks', { url: `${base}/x`, events: [] })).body.error).toMatch(/^events: expected >=1/);
    expect((await call('POST', '/api/webhooks', { url: `${base}/x`, events: ['run.exploded'] })).body.error).toMatch(/^events\.0: unknown event "run\.exploded": an event name \(notify, run\.started, /);
    expect((await call('POST', '/api/webhooks', { url: 'ftp://x', events: ['*'] })).body.error).toMatch(/^url: /);
    const hook = await create('/bad', ['*']);
    expect((await call('PATCH', `/api/webhooks/${hook.id}`, { secret: 'whsec_x' })).status).toBe(400);
    expect((await call('GET', '/api/webhooks/events')).body.map((e: any) => e.type)).toEqual(expect.arrayContaining(['run.started', 'run.completed', 'billing.spend_cap_reached', 'webhook.test']));
    await call('DELETE', `/api/webhooks/${hook.id}`);
  });
});

describe('webhook delivery', () => {
  it('signs a test event per Standard Webhooks: {id, type, createdAt, tenantId, data}, webhook-id the event id', async () => {
    const hook = await create('/signed', ['webhook.test']);
    const sent = await call('POST', `/api/webhooks/${hook.id}/test`);
    expect(sent.body).toMatchObject({ id: expect.stringMatching(/^whd_/), endpointId: hook.id, eventId: expect.stringMatching(/^evt_/), event: 'webhook.test', status: 'pending', attempts: 0 });
    const hit = await until(() => arrived('/signed')[0]);
    const payload = new Webhook(hook.secret).verify(hit.body, hit.headers) as any;
    expect(payload).toEqual({ id: sent.body.eventId, type: 'webhook.test', createdAt: expect.any(String), tenantId: 'default', data: { message: 'A test event from svc.', endpointId: hook.id } });
    expect(hit.headers['webhook-id']).toBe(sent.body.eventId);
    expect(Object.keys(JSON.parse(hit.body))).toEqual(['id', 'type', 'createdAt', 'tenantId', 'data']);
    await vi.waitFor(async () => {
      expect((await deliveries(hook.id))[0]).toMatchObject({ status: 'delivered', attempts: 1, lastResponseCode: 200, lastLatencyMs: expect.any(Number), nextAttemptAt: null, deliveredAt: expect.any(String) });
    }, WAIT);
  });

  it('delivers to a receiver answering 500 twice on the third attempt, the waits growing, the same id each time', async () => {
    const hook = await create('/flaky', ['webhook.test']);
    const sent = await call('POST', `/api/webhooks/${hook.id}/test`);
    const tries = await until(() => arrived('/flaky', sent.body.eventId).length >= 3 && arrived('/flaky', sent.body.eventId));
    expect(tries).toHaveLength(3);
    for (const t of tries) expect(new Webhook(hook.secret).verify(t.body, t.headers)).toMatchObject({ id: sent.body.eventId });
    // the schedule 0,1,3: the second wait is longer than the first
    expect(tries[2].at - tries[1].at).toBeGreaterThan(tries[1].at - tries[0].at);
    await vi.waitFor(async () => {
      expect((await deliveries(hook.id))[0]).toMatchObject({ status: 'delivered', attempts: 3, lastResponseCode: 200, lastError: null });
    }, WAIT);
  });

  it('shows a failing delivery with its next attempt, fails it when the schedule runs out, disables an endpoint failing too long, and retries on request', async () => {
    const hook = await create('/down', ['webhook.test']);
    const sent = await call('POST', `/api/webhooks/${hook.id}/test`);
    await until(() => arrived('/down', sent.body.eventId).length >= 1);
    await vi.waitFor(async () => {
      expect((await deliveries(hook.id))[0]).toMatchObject({ status: 'pending', attempts: 1, lastResponseCode: 503, lastError: 'the endpoint answered HTTP 503', nextAttemptAt: expect.any(String) });
    }, WAIT);
    await vi.waitFor(async () => {
      expect((await deliveries(hook.id))[0]).toMatchObject({ status: 'failed', attempts: 3, lastResponseCode: 503, nextAttemptAt: null });
    }, WAIT);
    // its attempts failed for 4 s, past SVC_WEBHOOK_DISABLE_AFTER_S: disabled, and the admins are told
    expect((await call('GET', `/api/webhooks/${hook.id}`)).body).toMatchObject({
      enabled: false,
      failingSince: expect.any(String),
      disabledReason: 'every attempt failed for 2 seconds (the last: the endpoint answered HTTP 503)',
    });
    const notes = (await call('GET', '/api/notifications')).body as any[];
    expect(notes.find((n) => n.event === 'webhook.disabled' && n.message.includes(hook.id))?.subject).toBe(`svc: webhook ${base}/down was disabled`);
    expect((await call('POST', `/api/webhooks/${hook.id}/deliveries/${sent.body.id}/retry`)).status).toBe(409);

    downIsUp = true;
    expect((await call('PATCH', `/api/webhooks/${hook.id}`, { enabled: true })).body).toMatchObject({ enabled: true, disabledReason: null, failingSince: null });
    const retried = await call('POST', `/api/webhooks/${hook.id}/deliveries/${sent.body.id}/retry`);
    expect(retried).toMatchObject({ status: 202, body: { id: sent.body.id, status: 'pending', attempts: 3 } });
    await until(() => arrived('/down', sent.body.eventId).length >= 4);
    await vi.waitFor(async () => {
      expect((await deliveries(hook.id))[0]).toMatchObject({ status: 'delivered', attempts: 4, lastResponseCode: 200 });
    }, WAIT);
  });

  it('disables an endpoint that answers 410 Gone, and tells the admins', async () => {
    const hook = await create('/gone', ['webhook.test']);
    await call('POST', `/api/webhooks/${hook.id}/test`);
    await until(() => arrived('/gone').length >= 1);
    await vi.waitFor(async () => {
      expect((await call('GET', `/api/webhooks/${hook.id}`)).body).toMatchObject({ enabled: false, disabledReason: 'the endpoint answered 410 Gone' });
      expect((await deliveries(hook.id))[0]).toMatchObject({ status: 'failed', attempts: 1, lastResponseCode: 410 });
    }, WAIT);
    const notes = (await call('GET', '/api/notifications')).body as any[];
    expect(notes.find((n) => n.event === 'webhook.disabled' && n.message.includes(hook.id))?.message).toContain('was disabled: the endpoint answered 410 Gone');
    // a disabled endpoint takes no events, and a retry is refused until it is enabled again
    expect((await call('POST', `/api/webhooks/${hook.id}/deliveries/${(await deliveries(hook.id))[0].id}/retry`)).status).toBe(409);
    expect((await call('PATCH', `/api/webhooks/${hook.id}`, { enabled: true })).body).toMatchObject({ enabled: true, disabledReason: null });
  });

  it('signs with both secrets during a rotation overlap, and with the new one alone once it ends', async () => {
    const hook = await create('/rotated', ['webhook.test']);
    const rotated = await call('POST', `/api/webhooks/${hook.id}/rotate-secret`);
    expect(rotated).toMatchObject({ status: 200, body: { id: hook.id, secret: expect.stringMatching(/^whsec_/), previousSecretExpiresAt: expect.any(String) } });
    expect(rotated.body.secret).not.toBe(hook.secret);
    expect(JSON.stringify((await call('GET', `/api/webhooks/${hook.id}`)).body)).not.toContain(rotated.body.secret);
    const during = await call('POST', `/api/webhooks/${hook.id}/test`);
    const hit = await until(() => arrived('/rotated', during.body.eventId)[0]);
    expect(hit.headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(new Webhook(hook.secret).verify(hit.body, hit.headers)).toMatchObject({ id: during.body.eventId });
    expect(new Webhook(rotated.body.secret).verify(hit.body, hit.headers)).toMatchObject({ id: during.body.eventId });

    const again = await call('POST', `/api/webhooks/${hook.id}/rotate-secret`, { overlapSeconds: 0 });
    expect(again.body.previousSecretExpiresAt).toBeNull();
    const after = await call('POST', `/api/webhooks/${hook.id}/test`);
    const next = await until(() => arrived('/rotated', after.body.eventId)[0]);
    expect(new Webhook(again.body.secret).verify(next.body, next.headers)).toMatchObject({ id: after.body.eventId });
    expect(() => new Webhook(rotated.body.secret).verify(next.body, next.headers)).toThrow();
  });
});

describe('the event catalogue', () => {
  const countEvents = (tenantId: string) =>
    withSystem(svc.server.built.database!.db, async (tx) => Number((await sql<{ n: string }>`select count(*) as n from webhook_events where tenant_id = ${tenantId}`.execute(tx)).rows[0].n));

  it('posts run.started, session.created and run.completed of a run, and writes nothing for a tenant nobody listens to', async () => {
    const hook = await create('/runs', ['run.*', 'session.*']);
    expect((await call('POST', '/api/profiles', { name: 'hooked', runtime: 'general', model: 'openai-compatible:fake-model' })).status).toBe(201);
    const run = await call('POST', '/api/runs', { profile: 'hooked', prompt: 'hello' });
    expect(run.status).toBe(202);
    const { runId, sessionId } = run.body;
    const got = await until(() => {
      const mine = arrived('/runs').map((h) => new Webhook(hook.secret).verify(h.body, h.headers) as any).filter((p) => p.data.runId === runId);
      return mine.length >= 3 && mine;
    });
    expect(got.map((p) => p.type).sort()).toEqual(['run.completed', 'run.started', 'session.created']);
    expect(got.find((p) => p.type === 'run.started').data).toEqual({ runId, sessionId, profile: 'hooked', parentId: null, origin: null });
    expect(got.find((p) => p.type === 'session.created').data).toEqual({ sessionId, profile: 'hooked', runId });
    expect(got.find((p) => p.type === 'run.completed').data).toMatchObject({ runId, sessionId, profile: 'hooked', status: 'ok', startedAt: expect.any(String), finishedAt: expect.any(String), usage: expect.any(Object) });
    expect(new Set(got.map((p) => p.id)).size).toBe(3);

    // another tenant with no endpoint: its run costs no outbox row
    expect((await call('POST', '/api/profiles', { name: 'quiet', runtime: 'general', model: 'openai-compatible:fake-model' }, other)).status).toBe(201);
    const before = await countEvents('initech');
    const quiet = await call('POST', '/api/runs', { profile: 'quiet', prompt: 'hello' }, other);
    expect(quiet.status).toBe(202);
    await vi.waitFor(async () => expect((await call('GET', `/api/runs/${quiet.body.runId}`, undefined, other)).body.status).toBe('ok'), WAIT);
    expect(await countEvents('initech')).toBe(before);
  });

  it('posts automation.fired and automation.failed of a firing, workflow.completed and workflow.failed of workflow runs', async () => {
    const hook = await create('/work', ['automation.*', 'workflow.*']);
    const payloads = () => arrived('/work').map((h) => new Webhook(hook.secret).verify(h.body, h.headers) as any);
    const a = await call('POST', '/api/automations', { name: 'nightly', profile: 'hooked', cron: '0 9 * * *', prompt: 'FAIL_HTTP_400' });
    expect(a.status, JSON.stringify(a.body)).toBe(201);
    const fired = await call('POST', `/api/automations/${a.body.id}/run`);
    expect(fired.status).toBe(202);
    const firing = await until(() => {
      const mine = payloads().filter((p) => p.data.automationId === a.body.id);
      return mine.length >= 2 && mine;
    });
    expect(firing.map((p) => p.type).sort()).toEqual(['automation.failed', 'automation.fired']);
    expect(firing.find((p) => p.type === 'automation.fired').data).toMatchObject({ name: 'nightly', profile: 'hooked', manual: true, firingId: expect.stringMatching(/^fir_/), runId: expect.stringMatching(/^run_/) });
    expect(firing.find((p) => p.type === 'automation.failed').data).toMatchObject({ name: 'nightly', error: 'run ended error' });

    const ok = await call('POST', '/api/workflows/runs', { name: 'report', nodes: [{ id: 'write', profile: 'hooked', prompt: 'hello' }] });
    const bad = await call('POST', '/api/workflows/runs', { name: 'doomed', nodes: [{ id: 'fetch', profile: 'hooked', prompt: 'FAIL_HTTP_400', onError: 'fail' }] });
    expect([ok.status, bad.status]).toEqual([202, 202]);
    const ends = await until(() => {
      const mine = payloads().filter((p) => [ok.body.workflowRun.id, bad.body.workflowRun.id].includes(p.data.workflowRunId));
      return mine.length >= 2 && mine;
    });
    expect(ends.find((p) => p.data.workflowRunId === ok.body.workflowRun.id)).toMatchObject({ type: 'workflow.completed', data: { name: 'report', nodes: 1 } });
    expect(ends.find((p) => p.data.workflowRunId === bad.body.workflowRun.id)).toMatchObject({ type: 'workflow.failed', data: { name: 'doomed', failedNodes: [{ id: 'fetch', profile: 'hooked' }] } });
  });
});
