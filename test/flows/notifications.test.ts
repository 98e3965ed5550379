import { EventEmitter } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestSvc, type TestSvc } from '../support/svc.ts';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.ts';

/**
 * Notifications that arrive: a real SMTP server (smtp-server) and real webhook receivers on 127.0.0.1 take what one
 * `all` instance delivers through its job queue. Retries are immediate here (SVC_NOTIFY_RETRY_DELAY_S=0,
 * SVC_WEBHOOK_SCHEDULE_S=0,0,0,0); every wait
 * is on an arrival.
 */
interface Mail {
  from: string;
  to: string[];
  raw: string;
}
interface Hit {
  path: string;
  headers: Record<string, string>;
  body: string;
}

/** The API shows a delivery's outcome once its attempt is recorded, just after the receiver has it. */
const WAIT = { timeout: 15_000, interval: 100 };
const arrivals = new EventEmitter();
const mails: Mail[] = [];
const hits: Hit[] = [];
/** Resolves with the first truthy `probe()`, re-checked on every arrival. */
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

let smtp: SMTPServer;
let receiver: Server;
let receiverUrl: string;
let svc: TestSvc;
let fake: FakeProvider;
/** `/flaky` answers 500 to the first two attempts of each delivery (by its webhook-id), then 204. */
const flakyAttempts = new Map<string, number>();

beforeAll(async () => {
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    onData(stream, session, callback) {
      let raw = '';
      stream.on('data', (d) => (raw += d));
      stream.on('end', () => {
        mails.push({ from: (session.envelope.mailFrom && session.envelope.mailFrom.address) || '', to: session.envelope.rcptTo.map((r) => r.address), raw });
        callback();
        arrivals.emit('arrival');
      });
    },
  });
  await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', () => r()));
  const smtpPort = (smtp.server.address() as AddressInfo).port;

  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      hits.push({ path: req.url ?? '/', headers: req.headers as Record<string, string>, body });
      const id = String(req.headers['webhook-id']);
      flakyAttempts.set(id, (flakyAttempts.get(id) ?? 0) + 1);
      const fail = req.url === '/flaky' && flakyAttempts.get(id)! <= 2;
      res.writeHead(fail ? 500 : 204).end();
      arrivals.emit('arrival');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;

  fake = await startFakeProvider();
  svc = await startTestSvc(
    {
      SVC_SMTP_URL: `smtp://127.0.0.1:${smtpPort}`,
      SVC_NOTIFY_RETRY_DELAY_S: '0',
      SVC_WEBHOOK_SCHEDULE_S: '0,0,0,0',
      OPENAI_COMPATIBLE_BASE_URL: fake.url,
      OPENAI_COMPATIBLE_API_KEY: 'x',
      // prepaid credit: $10 granted below, and the first charge takes it under the $10 low-credit line
      SVC_BILLING: 'ledger',
      AGENT_ORC_ADMIN_TENANT: 'default',
      SVC_LOW_CREDIT_MICRO_USD: '10000000',
    },
    'all',
  );
  expect((await svc.api('/api/billing/grants', { method: 'POST', json: { tenantId: 'default', amountMicroUSD: 10_000_000 } })).status).toBe(201);
  // fake-model has no price (its runs charge nothing); the fake provider answering as gpt-4o is priced
  expect((await svc.api('/api/profiles', { method: 'POST', json: { name: 'flaky-model', runtime: 'general', model: 'openai-compatible:fake-model' } })).status).toBe(201);
  expect((await svc.api('/api/profiles', { method: 'POST', json: { name: 'priced', runtime: 'general', model: 'openai-compatible:gpt-4o' } })).status).toBe(201);
  expect((await svc.api('/api/profiles', { method: 'POST', json: { name: 'notifier', runtime: 'general', model: 'openai-compatible:fake-model', tools: ['@notify'] } })).status).toBe(201);
});
afterAll(async () => {
  await svc?.stop();
  await fake?.close();
  await new Promise<void>((r) => (receiver ? (receiver.closeAllConnections(), receiver.close(() => r())) : r()));
  await new Promise<void>((r) => (smtp ? smtp.close(() => r()) : r()));
});

const call = async (method: string, path: string, json?: unknown) => {
  const res = await svc.api(path, { method, ...(json !== undefined ? { json } : {}) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
};

describe('notifications that arrive', () => {
  let secrets: Record<string, string>;

  it('takes the settings: email recipients and two webhooks for different events', async () => {
    const res = await call('PUT', '/api/notifications/settings', {
      email: { enabled: true, to: ['ops@example.com'], from: 'svc@example.com' },
      webhooks: [
        { url: `${receiverUrl}/hooks`, events: ['run.failed', 'automation.disabled', 'workflow.paused', 'credit.low'] },
        { url: `${receiverUrl}/flaky`, events: ['notify'] },
      ],
    });
    expect(res.status).toBe(200);
    secrets = Object.fromEntries(res.body.webhooks.map((w: any) => [new URL(w.url).pathname, w.secret]));
    expect(Object.keys(secrets)).toEqual(['/hooks', '/flaky']);
  });

  it('emails a failed run to the recipients and calls the webhook with a Standard Webhooks signature', async () => {
    const started = await call('POST', '/api/runs', { profile: 'flaky-model', prompt: 'FAIL_HTTP_400' });
    expect(started.status).toBe(202);
    const { runId } = started.body;

    const mail = await until(() => mails.find((m) => m.raw.includes(`run ${runId}`)));
    expect(mail.to).toEqual(['ops@example.com']);
    expect(mail.from).toBe('svc@example.com');
    expect(mail.raw).toMatch(new RegExp(`^Subject: svc: run ${runId} of flaky-model failed`, 'm'));
    expect(mail.raw).toContain(`Run ${runId} of profile flaky-model`);

    const hit = await until(() => hits.find((h) => h.path === '/hooks' && h.body.includes(runId)));
    // the reference implementation of Standard Webhooks verifies the signature (and throws if it is wrong)
    const payload = new Webhook(secrets['/hooks']).verify(hit.body, hit.headers) as any;
    expect(payload).toMatchObject({ type: 'run.failed', data: { event: 'run.failed', runId, status: 'queued' } });
    expect(() => new Webhook(secrets['/flaky']).verify(hit.body, hit.headers)).toThrow();

    await vi.waitFor(async () => {
      const n = (await call('GET', '/api/notifications')).body.find((x: any) => x.event === 'run.failed' && x.runId === runId);
      expect(n).toMatchObject({ status: 'sent', detail: '2 of 2 deliveries sent' });
      expect(n.deliveries).toEqual([
        expect.objectContaining({ channel: 'email', target: 'ops@example.com', status: 'sent', attempts: 1, lastError: null, deliveredAt: expect.any(String) }),
        expect.objectContaining({ channel: 'webhook', target: `${receiverUrl}/hooks`, status: 'sent', attempts: 1 }),
      ]);
    }, WAIT);
  });

  it('emails what an agent sends with the notify tool, to the address it names, naming its run', async () => {
    const started = await call('POST', '/api/runs', { profile: 'notifier', prompt: 'CALL_TOOL notify {"to":"boss@example.com","subject":"Weekly report","message":"The weekly report is ready."}' });
    expect(started.status).toBe(202);
    const mail = await until(() => mails.find((m) => m.raw.includes('Subject: Weekly report')));
    expect(mail.to).toEqual(['boss@example.com']);
    expect(mail.raw).toContain('The weekly report is ready.');
    await vi.waitFor(async () => {
      const n = (await call('GET', '/api/notifications')).body.find((x: any) => x.subject === 'Weekly report');
      expect(n).toMatchObject({ event: 'notify', runId: started.body.runId, to: 'boss@example.com', status: 'sent' });
    }, WAIT);
  });

  it('delivers to a receiver that fails twice on the third attempt, with the same webhook id each time', async () => {
    const created = await call('POST', '/api/notifications', { channel: 'inbox', subject: 'Report', message: 'The report is ready.' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ status: 'queued', deliveries: [{ channel: 'webhook', target: `${receiverUrl}/flaky`, status: 'queued', attempts: 0 }] });

    const tries = await until(() => {
      const mine = hits.filter((h) => h.path === '/flaky' && h.body.includes(created.body.id));
      return mine.length >= 3 && mine;
    });
    expect(new Set(tries.map((t) => t.headers['webhook-id'])).size).toBe(1);
    expect(new Webhook(secrets['/flaky']).verify(tries[2].body, tries[2].headers)).toMatchObject({ type: 'notify', data: { id: created.body.id, message: 'The report is ready.' } });

    await vi.waitFor(async () => {
      const n = (await call('GET', `/api/notifications/${created.body.id}`)).body;
      expect(n).toMatchObject({ status: 'sent', deliveries: [{ status: 'sent', attempts: 3, lastError: null }] });
    }, WAIT);
  });

  it('notifies when an automation is disabled', async () => {
    const a = await call('POST', '/api/automations', { name: 'doomed', profile: 'flaky-model', cron: '0 9 * * *', prompt: 'FAIL_HTTP_400', maxConsecutiveFailures: 1 });
    expect(a.status, JSON.stringify(a.body)).toBe(201);
    expect((await call('POST', `/api/automations/${a.body.id}/run`)).status).toBe(202);
    const hit = await until(() => hits.find((h) => h.path === '/hooks' && h.body.includes('"automation.disabled"')));
    const payload = new Webhook(secrets['/hooks']).verify(hit.body, hit.headers) as any;
    expect(payload.data.message).toContain(`Automation doomed (${a.body.id}) of profile flaky-model was disabled: 1 firings in a row failed`);
    await until(() => mails.find((m) => m.raw.includes('Subject: svc: automation doomed was disabled')));
    expect((await call('GET', `/api/automations/${a.body.id}`)).body.status).toBe('disabled');
  });

  it('notifies when a workflow run pauses on a failed node', async () => {
    const created = await call('POST', '/api/workflows/runs', { name: 'nightly-report', nodes: [{ id: 'fetch', profile: 'flaky-model', prompt: 'FAIL_HTTP_400' }] });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    const id = created.body.workflowRun.id;
    const hit = await until(() => hits.find((h) => h.path === '/hooks' && h.body.includes('"workflow.paused"') && h.body.includes(id)));
    const payload = new Webhook(secrets['/hooks']).verify(hit.body, hit.headers) as any;
    expect(payload.data.message).toMatch(new RegExp(`^Workflow run nightly-report \\(${id}\\) paused: node fetch \\(profile flaky-model\\) failed`));
    await until(() => mails.find((m) => m.raw.includes('Subject: svc: workflow nightly-report paused')));
  });

  it('notifies when a charge takes the credit below the low-credit line', async () => {
    const started = await call('POST', '/api/runs', { profile: 'priced', prompt: 'hello' });
    expect(started.status, JSON.stringify(started.body)).toBe(202);
    const hit = await until(() => hits.find((h) => h.path === '/hooks' && h.body.includes('"credit.low"')));
    const payload = new Webhook(secrets['/hooks']).verify(hit.body, hit.headers) as any;
    expect(payload.data.message).toMatch(/^The credit balance is \$9\.\d{6}, below \$10\.00\./);
    const mail = await until(() => mails.find((m) => m.raw.includes('Subject: svc: credit is below $10.00')));
    expect(mail.to).toEqual(['ops@example.com']);
  });

  it('marks a notification nobody can receive as undeliverable instead of leaving it queued', async () => {
    expect((await call('PUT', '/api/notifications/settings', { email: { enabled: false }, webhooks: [] })).status).toBe(200);
    const lone = await call('POST', '/api/notifications', { message: 'nobody listens' });
    expect(lone.body).toMatchObject({ status: 'undeliverable', detail: 'stored, not delivered: email is disabled in the notification settings; no webhook takes notify', deliveries: [] });
  });
});
