import { randomBytes } from 'node:crypto';
import { Hono } from 'hono';
import { listen } from './listen.ts';

/**
 * A fake Stripe API for tests: the few endpoints svc calls (Checkout Sessions create and retrieve, billing portal
 * sessions, a customer's subscriptions with their prices and products expanded), spoken as Stripe speaks them (form-encoded requests with bracketed keys, JSON objects, Stripe's error
 * shape), on 127.0.0.1 over real HTTP so the official `stripe` package is driven as in production. `pay(id)` plays the
 * buyer finishing the checkout and returns the `checkout.session.completed` event body Stripe would deliver (the test
 * signs it with the package's own test-header helper).
 */
export interface FakeStripeRequest {
  method: string;
  path: string;
  form: Record<string, string>;
  authorization: string | undefined;
}

export interface FakeStripe {
  url: string;
  requests: FakeStripeRequest[];
  sessions: Map<string, Record<string, any>>;
  /** Subscriptions as Stripe returns them (with `customer`), which `GET /v1/subscriptions?customer=` lists. */
  subscriptions: Array<Record<string, any>>;
  pay(sessionId: string): string;
  close(): Promise<void>;
}

const id = (prefix: string) => `${prefix}_test_${randomBytes(12).toString('hex')}`;

export async function startFakeStripe(): Promise<FakeStripe> {
  const requests: FakeStripeRequest[] = [];
  const sessions = new Map<string, Record<string, any>>();
  const subscriptions: Array<Record<string, any>> = [];
  let base = '';
  const noSuch = (what: string) => ({ error: { type: 'invalid_request_error', code: 'resource_missing', message: `No such ${what}` } });

  const app = new Hono();
  app.use('*', async (c, next) => {
    const text = c.req.method === 'GET' ? '' : await c.req.text();
    requests.push({ method: c.req.method, path: c.req.path, form: Object.fromEntries(new URLSearchParams(text)), authorization: c.req.header('authorization') });
    await next();
  });
  const last = () => requests[requests.length - 1].form;
  app.post('/v1/checkout/sessions', (c) => {
    const f = last();
    const session = {
      id: id('cs'),
      object: 'checkout.session',
      mode: f.mode,
      status: 'open',
      payment_status: 'unpaid',
      amount_total: Number(f['line_items[0][price_data][unit_amount]']),
      currency: f['line_items[0][price_data][currency]'],
      client_reference_id: f.client_reference_id ?? null,
      customer: f.customer ?? null,
      metadata: Object.fromEntries(Object.entries(f).flatMap(([k, v]) => (/^metadata\[(.+)\]$/.test(k) ? [[/^metadata\[(.+)\]$/.exec(k)![1], v]] : []))),
      success_url: f.success_url,
      cancel_url: f.cancel_url,
      livemode: false,
      url: '',
    };
    session.url = `${base}/c/pay/${session.id}`;
    sessions.set(session.id, session);
    return c.json(session);
  });
  app.get('/v1/checkout/sessions/:id', (c) => {
    const s = sessions.get(c.req.param('id'));
    return s ? c.json(s) : c.json(noSuch(`checkout.session: '${c.req.param('id')}'`), 404);
  });
  app.post('/v1/billing_portal/sessions', (c) => {
    const f = last();
    if (![...sessions.values()].some((s) => s.customer === f.customer)) return c.json(noSuch(`customer: '${f.customer}'`), 400);
    const pid = id('bps');
    return c.json({ id: pid, object: 'billing_portal.session', customer: f.customer, return_url: f.return_url, livemode: false, url: `${base}/p/session/${pid}` });
  });
  app.get('/v1/subscriptions', (c) => {
    const data = subscriptions.filter((s) => s.customer === c.req.query('customer'));
    return c.json({ object: 'list', data, has_more: false, url: '/v1/subscriptions' });
  });
  app.all('*', (c) => c.json(noSuch(`route: ${c.req.method} ${c.req.path}`), 404));

  const server = await listen(app.fetch);
  base = server.url;
  return {
    url: server.url,
    requests,
    sessions,
    subscriptions,
    pay(sessionId) {
      const s = sessions.get(sessionId);
      if (!s) throw new Error(`no checkout ${sessionId}`);
      Object.assign(s, { status: 'complete', payment_status: 'paid', customer: s.customer ?? id('cus') });
      return JSON.stringify({ id: id('evt'), object: 'event', api_version: '2025-01-01', created: Math.floor(Date.now() / 1000), livemode: false, type: 'checkout.session.completed', data: { object: { ...s } } });
    },
    close: () => server.close(),
  };
}
