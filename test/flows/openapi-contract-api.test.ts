import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgentsHarness, type AgentsHarness } from '../support/agents.ts';
import { startFakeStripe, type FakeStripe } from '../support/fake-stripe.ts';

/**
 * The API reference against real answers, for the control plane's resources beside runs, profiles and sessions
 * (automations, billing, pools and pods, publishing and the chat gateway, kits, memory, notifications and webhooks,
 * skills, workflows): every operation of theirs says what it does and what it answers, and the answers a server really
 * gives (one of each kind, made with the resources a user makes) match the documented schema of their status. The
 * check is strict about fields: an answer with a field its schema does not name fails, so the reference lists them all.
 */
interface Operation {
  summary?: string;
  description?: string;
  responses: Record<string, { content?: Record<string, { schema?: Record<string, unknown> }> }>;
}
interface Spec {
  paths: Record<string, Record<string, Operation>>;
  components: Record<string, unknown>;
}

const AREAS = [
  /^\/api\/(automations|schedules|billing|spend-cap|stripe|pools|pods|published|stats|templates|kits|public|memory-stores|memory-mounts|notifications|webhooks|skills|workflows)(\/|$)/,
  /^\/api\/profiles\/\{name\}\/(publish|published|keys|metrics)(\/|$)/,
  /^\/chat\//,
];

let h: AgentsHarness;
let stripe: FakeStripe;
let spec: Spec;
const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
const compiled = new Map<string, ValidateFunction>();
/** What each answer checked was: `GET /api/pools 200`. */
const checked = new Set<string>();

/**
 * The schema with its objects closed: an object schema that names its properties and says nothing of others (valibot's
 * `v.object`, which lets clients ignore fields they do not know) refuses other fields here, so an answer's field the
 * reference forgot fails. Open ones (`v.looseObject`, records) stay open.
 */
function closed(node: unknown): any {
  if (Array.isArray(node)) node.forEach(closed);
  else if (node && typeof node === 'object') {
    const o = node as Record<string, unknown>;
    if (o.type === 'object' && o.properties && !('additionalProperties' in o)) o.additionalProperties = false;
    Object.values(o).forEach(closed);
  }
  return node;
}

/** The documented schema of `method path` answering `status` (the `$schema` draft marker is the converter's, not ajv's). */
function validatorOf(method: string, path: string, status: number): ValidateFunction {
  const key = `${method} ${path} ${status}`;
  const cached = compiled.get(key);
  if (cached) return cached;
  const op = spec.paths[path]?.[method.toLowerCase()];
  expect(op, `${method} ${path} is documented`).toBeDefined();
  const schema = op!.responses[String(status)]?.content?.['application/json']?.schema;
  expect(schema, `${method} ${path} documents a JSON answer for ${status}`).toBeDefined();
  const { $schema: _draft, ...rest } = schema!;
  // error answers refer to the document's components (`#/components/schemas/Error`): carried along for ajv to resolve
  const fn = ajv.compile({ ...closed(structuredClone(rest)), components: spec.components });
  compiled.set(key, fn);
  return fn;
}

/**
 * Calls the route and checks its answer against the reference; answers the body. `documentedAs`: the status whose
 * schema the answer has (a memory entry's PUT documents its 200 and answers the same body with 201 when it creates).
 */
async function call(
  method: string,
  path: string,
  opts: { url?: string; json?: unknown; body?: FormData; status: number; documentedAs?: number; key?: string | null; headers?: Record<string, string> },
): Promise<any> {
  const url = opts.url ?? path;
  const res = await h.svc.api(url, { method, json: opts.json, body: opts.body, key: opts.key, headers: opts.headers });
  const text = await res.text();
  expect(res.status, `${method} ${url}: ${text.slice(0, 300)}`).toBe(opts.status);
  if (opts.status === 204) {
    expect(text).toBe('');
    checked.add(`${method} ${path} 204`);
    return undefined;
  }
  const body = JSON.parse(text);
  const validate = validatorOf(method, path, opts.documentedAs ?? opts.status);
  expect(validate(body), `${method} ${url} answers as documented: ${ajv.errorsText(validate.errors)}\n${text.slice(0, 600)}`).toBe(true);
  checked.add(`${method} ${path} ${opts.status}`);
  return body;
}

beforeAll(async () => {
  stripe = await startFakeStripe();
  h = await startAgentsHarness({ SVC_BILLING: 'stripe', STRIPE_SECRET_KEY: 'sk_test_contractcontract01', STRIPE_WEBHOOK_SECRET: 'whsec_contractcontract01', SVC_STRIPE_API_URL: stripe.url });
  const res = await fetch(`${h.svc.url}/openapi.json`);
  expect(res.status).toBe(200);
  spec = (await res.json()) as Spec;
  // the runs below draw platform credit (the server's provider key): the operator grants some first
  await call('POST', '/api/billing/grants', { json: { tenantId: 'default', amountMicroUSD: 50_000_000 }, status: 201 });
  await call('POST', '/api/profiles', { json: { name: 'contract-bot', runtime: 'general', model: 'openai-compatible:gpt-4o' }, status: 201 }).catch(() => undefined);
}, 90_000);
afterAll(async () => {
  await h?.stop();
  await stripe?.close();
});

describe('the reference of the control plane’s resources', () => {
  it('gives each of their operations a summary, a description and its success answer', () => {
    const missing: string[] = [];
    let count = 0;
    for (const [path, methods] of Object.entries(spec.paths)) {
      if (!AREAS.some((a) => a.test(path))) continue;
      for (const [method, op] of Object.entries(methods)) {
        count++;
        const [status, success] = Object.entries(op.responses)[0]!;
        const media = Object.keys(success.content ?? {})[0];
        const hasSchema = status === '204' || status === '302' || (media !== undefined && media !== 'application/json') || success.content?.[media!]?.schema !== undefined;
        if (!op.summary || !op.description || !hasSchema) missing.push(`${method.toUpperCase()} ${path}`);
      }
    }
    expect(count).toBeGreaterThan(130);
    expect(missing).toEqual([]);
  });

  it('answers billing as documented', async () => {
    const wallet = await call('GET', '/api/billing/wallet', { status: 200 });
    expect(wallet.configured).toBe(true);
    await call('GET', '/api/spend-cap', { status: 200 });
    await call('PUT', '/api/spend-cap', { json: { limit_usd_cents: 100_000, billing_email: 'billing@example.com' }, status: 200 });
    const checkout = await call('POST', '/api/billing/checkout', { json: { cents: wallet.packs[0].cents }, status: 200 });
    await call('GET', '/api/billing/checkouts/{id}', { url: `/api/billing/checkouts/${checkout.id}`, status: 200 });
    const portal = await h.svc.api('/api/billing/portal', { method: 'POST' });
    expect(portal.status).toBe(409);
  });

  it('answers automations as documented', async () => {
    const a = await call('POST', '/api/automations', { json: { name: 'nightly', profile: 'contract-bot', prompt: 'sum up', cron: '0 3 * * *' }, status: 201 });
    await call('GET', '/api/automations', { status: 200 });
    await call('GET', '/api/schedules', { status: 200 });
    await call('GET', '/api/automations/{id}', { url: `/api/automations/${a.id}`, status: 200 });
    await call('PUT', '/api/automations/{id}', { url: `/api/automations/${a.id}`, json: { prompt: 'sum up, briefly' }, status: 200 });
    expect((await call('POST', '/api/automations/{id}/stop', { url: `/api/automations/${a.id}/stop`, status: 200 })).status).toBe('stopped');
    expect((await call('POST', '/api/automations/{id}/start', { url: `/api/automations/${a.id}/start`, status: 200 })).status).toBe('active');
    await call('GET', '/api/automations/{id}/memory', { url: `/api/automations/${a.id}/memory`, status: 200 });
    await call('PUT', '/api/automations/{id}/memory', { url: `/api/automations/${a.id}/memory`, json: { body: 'last time: fine' }, status: 200 });
    await call('POST', '/api/automations/{id}/run', { url: `/api/automations/${a.id}/run`, status: 202 });
    expect((await call('GET', '/api/automations/firings', { status: 200 })).length).toBeGreaterThan(0);
    await call('POST', '/api/schedules/parse', { json: { text: 'every 15 minutes' }, status: 200 });
    await call('POST', '/api/automations/{id}/pause', { url: `/api/automations/${a.id}/pause`, status: 200 });
    await call('DELETE', '/api/automations/{id}', { url: `/api/automations/${a.id}`, status: 204 });
  });

  it('answers workflows as documented', async () => {
    const nodes = [{ id: 'draft', profile: 'contract-bot', prompt: 'draft it' }, { id: 'review', profile: 'contract-bot', dependsOn: ['draft'] }];
    const { workflowDefinition: def } = await call('POST', '/api/workflows/definitions', { json: { name: 'write-up', nodes }, status: 201 });
    await call('GET', '/api/workflows/definitions', { status: 200 });
    await call('GET', '/api/workflows/definitions/{id}', { url: `/api/workflows/definitions/${def.id}`, status: 200 });
    await call('PUT', '/api/workflows/definitions/{id}', { url: `/api/workflows/definitions/${def.id}`, json: { ...def, name: 'write-up-2' }, status: 200 });
    const { workflowSchedule: sched } = await call('POST', '/api/workflows/schedules', { json: { workflowDefinitionId: def.id, cron: '0 4 * * *' }, status: 201 });
    await call('GET', '/api/workflows/schedules', { status: 200 });
    await call('GET', '/api/workflows/schedules/{id}', { url: `/api/workflows/schedules/${sched.id}`, status: 200 });
    await call('POST', '/api/workflows/schedules/{id}/pause', { url: `/api/workflows/schedules/${sched.id}/pause`, status: 200 });
    await call('POST', '/api/workflows/schedules/{id}/resume', { url: `/api/workflows/schedules/${sched.id}/resume`, status: 200 });
    await call('DELETE', '/api/workflows/schedules/{id}', { url: `/api/workflows/schedules/${sched.id}`, status: 204 });
    const { workflowRun: run } = await call('POST', '/api/workflows/runs', { json: { definitionId: def.id, autoStart: false }, status: 202 });
    expect(run.status).toBe('pending');
    await call('GET', '/api/workflows/runs', { status: 200 });
    await call('GET', '/api/workflows/runs/{id}', { url: `/api/workflows/runs/${run.id}`, status: 200 });
    await call('POST', '/api/workflows/runs/{id}/nodes/{nodeId}', { url: `/api/workflows/runs/${run.id}/nodes/draft`, json: { status: 'ok', output: 'a draft' }, status: 202 });
    await call('POST', '/api/workflows/runs/{id}/cancel', { url: `/api/workflows/runs/${run.id}/cancel`, status: 202 });
    await call('DELETE', '/api/workflows/definitions/{id}', { url: `/api/workflows/definitions/${def.id}`, status: 204 });
  });

  it('answers publishing and the chat gateway as documented', async () => {
    await call('POST', '/api/profiles/{name}/publish', { url: '/api/profiles/contract-bot/publish', json: { slug: 'contract-bot' }, status: 201 });
    await call('GET', '/api/published', { status: 200 });
    await call('GET', '/api/profiles/{name}/published', { url: '/api/profiles/contract-bot/published', status: 200 });
    await call('PATCH', '/api/profiles/{name}/published', { url: '/api/profiles/contract-bot/published', json: { rateLimitRpm: 120 }, status: 200 });
    const key = await call('POST', '/api/profiles/{name}/keys', { url: '/api/profiles/contract-bot/keys', json: { label: 'site' }, status: 201 });
    await call('GET', '/api/profiles/{name}/keys', { url: '/api/profiles/contract-bot/keys', status: 200 });

    const reply = await call('POST', '/chat/{slug}', { url: '/chat/contract-bot', key: key.token, json: { message: 'hello there' }, status: 200 });
    await call('GET', '/chat/{slug}/conversations/{conversationId}', { url: `/chat/contract-bot/conversations/${reply.conversationId}`, key: key.token, status: 200 });
    const completion = await call('POST', '/chat/{slug}/v1/chat/completions', {
      url: '/chat/contract-bot/v1/chat/completions',
      key: key.token,
      json: { model: 'any', messages: [{ role: 'user', content: 'hi from an OpenAI client' }] },
      status: 200,
    });
    expect(completion.choices[0].message.content).toContain('hi from an OpenAI client');
    const page = await fetch(`${h.svc.url}/chat/contract-bot`);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(Object.keys(spec.paths['/chat/{slug}']!.get!.responses['200']!.content!)).toEqual(['text/html']);

    await call('GET', '/api/stats', { url: '/api/stats?window=24h', status: 200 });
    await call('GET', '/api/profiles/{name}/metrics', { url: '/api/profiles/contract-bot/metrics', status: 200 });
    await call('DELETE', '/api/profiles/{name}/keys/{id}', { url: `/api/profiles/contract-bot/keys/${key.id}`, status: 204 });
  }, 60_000);

  it('answers pools, pods and kits as documented', async () => {
    await call('POST', '/api/pools', { json: { name: 'crew', description: 'the writers', members: [{ profile: 'contract-bot', role: 'lead' }], fs: { read: ['docs/**'] } }, status: 201 });
    await call('GET', '/api/pools', { status: 200 });
    await call('POST', '/api/pods', { json: { name: 'squad', members: [] }, status: 201 });
    await call('GET', '/api/pods', { status: 200 });
    await call('GET', '/api/pods/{name}', { url: '/api/pods/crew', status: 200 });
    await call('PATCH', '/api/pods/{name}', { url: '/api/pods/squad', json: { description: 'a second team' }, status: 200 });
    await call('POST', '/api/pods/{name}/pin', { url: '/api/pods/squad/pin', status: 200 });
    await call('DELETE', '/api/pods/{name}/pin', { url: '/api/pods/squad/pin', status: 200 });
    await call('POST', '/api/pods/{name}/members', { url: '/api/pods/squad/members', json: { profile: 'contract-bot' }, status: 200 });
    await call('DELETE', '/api/pods/{name}/members/{profile}', { url: '/api/pods/squad/members/contract-bot', status: 200 });
    await call('DELETE', '/api/pods/{name}', { url: '/api/pods/squad', status: 204 });

    const kit = await call('POST', '/api/templates', { json: { slug: 'crew-kit', label: 'Crew', source: { pool: 'crew' } }, status: 201 });
    await call('GET', '/api/templates', { status: 200 });
    await call('GET', '/api/kits', { url: '/api/kits?scope=saved', status: 200 });
    await call('GET', '/api/templates/{slug}', { url: '/api/templates/crew-kit', status: 200 });
    await call('GET', '/api/kits/{id}', { url: `/api/kits/${kit.id}`, status: 200 });
    await call('POST', '/api/templates/preview', { json: { pool: 'crew' }, status: 200 });
    await call('PATCH', '/api/kits/{id}', { url: `/api/kits/${kit.id}`, json: { label: 'The crew' }, status: 200 });
    await call('GET', '/api/templates/{slug}/copy-plan', { url: '/api/templates/crew-kit/copy-plan?targetName=crew-copy', status: 200 });
    expect((await call('POST', '/api/templates/{slug}/copy', { url: '/api/templates/crew-kit/copy', json: { targetName: 'crew-copy' }, status: 200 })).copied).toBe(true);
    expect((await call('POST', '/api/kits/{id}/copy', { url: `/api/kits/${kit.id}/copy`, json: { targetName: 'crew-copy' }, status: 200 })).copied).toBe(false);
    await call('GET', '/api/templates', { url: '/api/templates?scope=copied', status: 200 });
    await call('POST', '/api/templates/{slug}/republish', { url: '/api/templates/crew-kit/republish', status: 200 });
    await call('POST', '/api/kits/{id}/events', { url: `/api/kits/${kit.id}/events`, json: { kind: 'view' }, status: 204 });
    await call('GET', '/api/public/kits/{id}', { url: `/api/public/kits/${kit.id}`, key: null, status: 200 });
    await call('GET', '/api/public/templates/{slug}', { url: '/api/public/templates/crew-kit', key: null, status: 200 });
    await call('POST', '/api/public/kits/{id}/events', { url: `/api/public/kits/${kit.id}/events`, key: null, json: { kind: 'click' }, status: 204 });
    await call('DELETE', '/api/kits/{id}', { url: `/api/kits/${kit.id}`, status: 204 });
    await call('DELETE', '/api/pools/{name}', { url: '/api/pools/crew-copy', status: 204 });
  });

  it('answers memory stores as documented', async () => {
    await call('POST', '/api/memory-stores', { json: { name: 'notes', description: 'what we learnt', metadata: { team: 'support' } }, status: 201 });
    await call('GET', '/api/memory-stores', { status: 200 });
    await call('GET', '/api/memory-stores/{store}', { url: '/api/memory-stores/notes', status: 200 });
    await call('PATCH', '/api/memory-stores/{store}', { url: '/api/memory-stores/notes', json: { description: 'what we learnt, kept' }, status: 200 });
    const entry = await call('PUT', '/api/memory-stores/{store}/entries/{path}', { url: '/api/memory-stores/notes/entries/customers/acme.md', json: { content: 'Acme likes short answers' }, status: 201, documentedAs: 200 });
    await call('PUT', '/api/memory-stores/{store}/entries/{path}', { url: '/api/memory-stores/notes/entries/customers/acme.md', json: { content: 'Acme likes short, polite answers', expectedVersion: 1 }, status: 200 });
    await call('GET', '/api/memory-stores/{store}/entries', { status: 200, url: '/api/memory-stores/notes/entries?prefix=/customers' });
    await call('GET', '/api/memory-stores/{store}/entries/{path}', { url: '/api/memory-stores/notes/entries/customers/acme.md', status: 200 });
    await call('POST', '/api/memory-stores/{store}/rename', { url: '/api/memory-stores/notes/rename', json: { from: '/customers/acme.md', to: '/customers/acme-inc.md' }, status: 200 });
    expect((await call('GET', '/api/memory-stores/{store}/search', { url: '/api/memory-stores/notes/search?q=polite', status: 200 })).length).toBe(1);
    const versions = await call('GET', '/api/memory-stores/{store}/versions', { url: `/api/memory-stores/notes/versions?entryId=${entry.id}`, status: 200 });
    const first = versions.at(-1);
    await call('GET', '/api/memory-stores/{store}/versions/{id}', { url: `/api/memory-stores/notes/versions/${first.id}`, status: 200 });
    await call('POST', '/api/memory-stores/{store}/versions/{id}/restore', { url: `/api/memory-stores/notes/versions/${first.id}/restore`, status: 200 });
    await call('DELETE', '/api/memory-stores/{store}/entries/{path}', { url: '/api/memory-stores/notes/entries/customers/acme-inc.md', status: 204 });

    await call('POST', '/api/memory-stores', { json: { name: 'people', scope: 'per_user' }, status: 201 });
    await call('PUT', '/api/memory-stores/{store}/entries/{path}', { url: '/api/memory-stores/people/entries/prefs.md', json: { content: 'tea, not coffee', userId: 'user-1' }, status: 201, documentedAs: 200 });
    await call('GET', '/api/memory-stores/{store}/users', { url: '/api/memory-stores/people/users', status: 200 });
    await call('DELETE', '/api/memory-stores/{store}', { url: '/api/memory-stores/people', status: 204 });
  });

  it('answers webhooks and notifications as documented', async () => {
    await call('GET', '/api/webhooks/events', { status: 200 });
    const hook = await call('POST', '/api/webhooks', { json: { url: 'http://127.0.0.1:9/hook', events: ['run.*', 'notify'] }, status: 201 });
    await call('GET', '/api/webhooks', { status: 200 });
    await call('GET', '/api/webhooks/{id}', { url: `/api/webhooks/${hook.id}`, status: 200 });
    await call('PATCH', '/api/webhooks/{id}', { url: `/api/webhooks/${hook.id}`, json: { description: 'the audit log' }, status: 200 });
    await call('POST', '/api/webhooks/{id}/rotate-secret', { url: `/api/webhooks/${hook.id}/rotate-secret`, json: { overlapSeconds: 60 }, status: 200 });
    const delivery = await call('POST', '/api/webhooks/{id}/test', { url: `/api/webhooks/${hook.id}/test`, status: 202 });
    await call('GET', '/api/webhooks/{id}/deliveries', { url: `/api/webhooks/${hook.id}/deliveries`, status: 200 });
    await call('GET', '/api/webhooks/{id}/deliveries/{deliveryId}', { url: `/api/webhooks/${hook.id}/deliveries/${delivery.id}`, status: 200 });
    await call('POST', '/api/webhooks/{id}/deliveries/{deliveryId}/retry', { url: `/api/webhooks/${hook.id}/deliveries/${delivery.id}/retry`, status: 202 });

    await call('GET', '/api/notifications/settings', { status: 200 });
    const settings = await call('PUT', '/api/notifications/settings', {
      json: { email: { to: ['ops@example.com'] }, webhooks: [{ id: hook.id, url: 'http://127.0.0.1:9/hook' }, { url: 'http://127.0.0.1:9/other' }] },
      status: 200,
    });
    expect(settings.webhooks[1].secret).toMatch(/^whsec_/);
    const sent = await call('POST', '/api/notifications', { json: { message: 'the nightly report is ready' }, status: 201 });
    await call('GET', '/api/notifications', { status: 200 });
    await call('GET', '/api/notifications/{id}', { url: `/api/notifications/${sent.id}`, status: 200 });
    await call('DELETE', '/api/webhooks/{id}', { url: `/api/webhooks/${hook.id}`, status: 204 });
  });

  it('answers skills as documented', async () => {
    await call('POST', '/api/skills', { json: { name: 'greeter', description: 'Says hello', body: '# Greet\nSay hello.' }, status: 201 });
    await call('GET', '/api/skills', { status: 200 });
    await call('GET', '/api/skills/{name}', { url: '/api/skills/greeter', status: 200 });
    const form = new FormData();
    form.append('files', new File(['---\nname: summarizer\ndescription: Sums things up.\n---\n# Summarize\nBe brief.\n'], 'SKILL.md'));
    form.append('files', new File(['#!/bin/sh\necho hi\n'], 'scripts/run.sh'));
    form.append('executable', 'scripts/run.sh');
    const dry = await call('POST', '/api/skills/import', { body: form, status: 200 });
    expect(dry.validation.ok).toBe(true);
    await call('POST', '/api/skills/import/{stagingId}', { url: `/api/skills/import/${dry.stagingId}`, status: 201 });
    await call('DELETE', '/api/skills/{name}', { url: '/api/skills/greeter', status: 204 });
  });

  it('documents the error answers it gives', async () => {
    expect((await call('GET', '/api/automations/{id}', { url: '/api/automations/aut_nope', status: 404 })).error).toMatch(/aut_nope/);
    await call('POST', '/api/memory-stores', { json: { name: 'twice' }, status: 201 });
    expect((await call('POST', '/api/memory-stores', { json: { name: 'twice' }, status: 409 })).error).toMatch(/twice/);
    await call('POST', '/api/automations', { json: { name: 'typo', profile: 'contract-bot', cron: '0 3 * * *', instructions: 'x' }, status: 400 });
    await call('POST', '/api/webhooks', { json: { url: 'http://127.0.0.1:9/x', events: ['*'] }, key: null, status: 401 });
    await call('POST', '/chat/{slug}', { url: '/chat/nobody-here', json: { message: 'hi' }, status: 404 });
    await call('GET', '/api/profiles/{name}/published', { url: '/api/profiles/never-published/published', status: 404 });
    const op = spec.paths['/api/automations/{id}']!.get!;
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '401', '404']));
    const published = spec.paths['/api/profiles/{name}/publish']!.post!;
    expect(Object.keys(published.responses)).toEqual(expect.arrayContaining(['201', '400', '403', '409']));
    expect(checked.size).toBeGreaterThan(100);
  });
});
