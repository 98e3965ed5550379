import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSvc, type TestSvc } from '../support/svc.ts';
import { startFakeStripe, type FakeStripe } from '../support/fake-stripe.ts';

/**
 * A strict /api: a JSON body with a field the route does not know is a 400 naming the field, on every /api route
 * that takes a JSON body. The routes are read from the server's own /openapi.json (generated from the mounted routes),
 * so a new route is walked without touching this file. Stripe's webhook is the one exception: its body is Stripe's,
 * verified by signature, and Stripe adds fields when it likes.
 */
const EXTRA = 'zzNotAField';
const WRITE_METHODS = new Set(['post', 'put', 'patch']);
/** Provider webhooks: the provider's body, checked by its signature, never by our schema. */
const PROVIDER_WEBHOOKS = new Set(['POST /api/stripe/webhook']);

interface Op {
  requestBody?: { content: Record<string, { schema?: { properties?: Record<string, unknown> } }> };
}

describe('a strict /api', () => {
  let svc: TestSvc;
  let stripe: FakeStripe;
  let paths: Record<string, Record<string, Op>>;
  beforeAll(async () => {
    stripe = await startFakeStripe();
    svc = await startTestSvc(
      {
        DATABASE_URL: 'memory',
        AGENT_ORC_ADMIN_TENANT: 'default',
        SVC_BILLING: 'stripe',
        STRIPE_SECRET_KEY: 'sk_test_strictstrictstrict01',
        STRIPE_WEBHOOK_SECRET: 'whsec_strictstrictstrict01',
        SVC_STRIPE_API_URL: stripe.url,
      },
      'all',
    );
    paths = ((await (await fetch(`${svc.url}/openapi.json`)).json()) as { paths: typeof paths }).paths;
  }, 60_000);
  afterAll(async () => {
    await svc?.stop();
    await stripe?.close();
  });

  it('answers 400 naming an unknown field on every /api route that takes a JSON body', async () => {
    const walked: string[] = [];
    const failures: string[] = [];
    for (const [path, methods] of Object.entries(paths)) {
      if (!path.startsWith('/api/')) continue;
      for (const [method, op] of Object.entries(methods)) {
        const name = `${method.toUpperCase()} ${path}`;
        if (!WRITE_METHODS.has(method) || PROVIDER_WEBHOOKS.has(name)) continue;
        const declared = op.requestBody?.content['application/json'] !== undefined;
        const res = await svc.api(path.replace(/\{[^}]+\}/g, 'nope'), { method: method.toUpperCase(), json: { [EXTRA]: 1 } });
        const text = await res.text();
        const named = res.status === 400 && text.includes(`${EXTRA}: unknown field`);
        if (declared) {
          walked.push(name);
          if (!named) failures.push(`${name} → ${res.status} ${text.slice(0, 160)}`);
          // a route that reads a JSON body without declaring it (doc({ body })) would escape this walk
        } else if (named) failures.push(`${name} reads a JSON body its reference does not declare: add doc({ body: Schema })`);
      }
    }
    expect(failures).toEqual([]);
    expect(walked.length).toBeGreaterThan(50);
  }, 120_000);

  it('suggests the field meant, and names unknown fields inside nested objects', async () => {
    const res = await svc.api('/api/profiles', { method: 'POST', json: { name: 'typo', runtime: 'general', model: 'demo:echo', instructions: 'Be brief.' } });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toBe('instructions: unknown field (did you mean systemPrompt?)');
    const nested = await svc.api('/api/pods', { method: 'POST', json: { name: 'nest', members: [{ profile: 'writer', rol: 'lead' }] } });
    expect(nested.status).toBe(400);
    expect((await nested.json()).error).toBe('members.0.rol: unknown field (did you mean role?)');
    expect((await svc.api('/api/profiles/typo')).status).toBe(404);
  });

  it('leaves /v1 lenient: the openai SDK and other clients may send fields a route does not know', async () => {
    const res = await svc.api('/v1/agents', { method: 'POST', json: { name: 'lenient', model: 'svc/demo/echo', [EXTRA]: 1 } });
    expect(res.status, await res.clone().text()).toBeLessThan(300);
  });

  it('takes back what a GET answered: read-only fields are accepted and ignored', async () => {
    const ok = async (path: string, init: Parameters<TestSvc['api']>[1] = {}) => {
      const res = await svc.api(path, init);
      const text = await res.text();
      expect(res.status, `${init.method ?? 'GET'} ${path}: ${text}`).toBeLessThan(300);
      return text ? JSON.parse(text) : undefined;
    };
    await ok('/api/profiles', { method: 'POST', json: { name: 'writer', runtime: 'general', model: 'demo:echo', systemPrompt: 'Write.' } });
    await ok('/api/pools', { method: 'POST', json: { name: 'desk', members: [{ profile: 'writer', role: 'lead' }] } });
    const automation = await ok('/api/automations', { method: 'POST', json: { name: 'nightly', profile: 'writer', prompt: 'go', cron: '0 9 * * *' } });
    const definition = (await ok('/api/workflows/definitions', { method: 'POST', json: { name: 'flow', nodes: [{ id: 'a', profile: 'writer', prompt: 'go' }] } })).workflowDefinition;
    await ok('/api/memory-stores', { method: 'POST', json: { name: 'notes' } });
    await ok('/api/tenants', { method: 'POST', json: { id: 'team', name: 'Team' } });
    await ok('/api/pods', { method: 'POST', json: { name: 'crew', members: [{ profile: 'writer' }] } });
    const kit = await ok('/api/kits', { method: 'POST', json: { slug: 'desk-writer', label: 'Desk writer', source: { agent: 'writer' } } });
    await ok('/api/profiles/writer/publish', { method: 'POST', json: {} });
    await ok('/api/memory-stores/notes/entries/a.md', { method: 'PUT', json: { content: 'hello' } });
    await ok(`/api/automations/${automation.id}/memory`, { method: 'PUT', json: { body: 'remember' } });
    const pairs: Array<[string, string, (x: any) => unknown]> = [
      ['PUT', '/api/profiles/writer', (x) => x],
      ['PUT', `/api/automations/${automation.id}`, (x) => x],
      ['PUT', `/api/workflows/definitions/${definition.id}`, (x) => x.workflowDefinition],
      ['PATCH', '/api/memory-stores/notes', (x) => x],
      ['PUT', '/api/tenants/team', (x) => x],
      ['PATCH', '/api/pods/crew', (x) => x],
      ['PATCH', `/api/kits/${kit.id}`, (x) => x],
      ['PATCH', '/api/profiles/writer/published', (x) => x],
      ['PUT', '/api/notifications/settings', (x) => x],
      ['PUT', '/api/memory-stores/notes/entries/a.md', (x) => x],
      ['PUT', `/api/automations/${automation.id}/memory`, (x) => x],
    ];
    for (const [method, path, unwrap] of pairs) {
      const got = unwrap(await ok(path));
      await ok(path, { method, json: got });
    }
  });
});
