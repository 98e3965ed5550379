import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSvc, type TestSvc } from '../support/svc.ts';
import { startFakeStripe, type FakeStripe } from '../support/fake-stripe.ts';
import { validate } from '@readme/openapi-parser';

/**
 * The API reference: /openapi.json is generated from the assembled routes, so every route mounted under /api, /v1
 * and /chat is in it, request bodies carry the JSON Schema of the valibot schema the route validates with, and every
 * documented operation answers (a JSON error at worst, never a 500, never "no route"). /docs renders it.
 */
const DOCUMENTED = ['/api/', '/v1/', '/chat/'];
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

interface Operation {
  summary?: string;
  description?: string;
  requestBody?: { content: Record<string, { schema: { properties?: Record<string, unknown>; required?: string[] } }> };
  responses: Record<string, { content?: Record<string, { schema?: unknown }> }>;
}

interface Spec {
  openapi: string;
  info: { version: string };
  paths: Record<string, Record<string, Operation>>;
}

/** What an operation lacks of its documentation: a summary, a description, the schema of its JSON success answer. */
function undocumented(op: Operation): string[] {
  const lacks: string[] = [];
  if (!op.summary?.trim()) lacks.push('summary');
  if (!op.description?.trim()) lacks.push('description');
  const success = Object.entries(op.responses).find(([status]) => /^2\d\d$/.test(status));
  const json = success?.[1].content?.['application/json'];
  // a non-JSON answer (a stream, a page) and a 204 or a redirect have no JSON schema to give
  if (!success || (success[0] !== '204' && json && !json.schema)) lacks.push('response schema');
  return lacks;
}

describe('the API reference of an all-in-one server', () => {
  let svc: TestSvc;
  let stripe: FakeStripe;
  let spec: Spec;
  beforeAll(async () => {
    // with a billing client (Stripe, faked at its HTTP boundary): without one the wallet and checkout answer 503 by design
    stripe = await startFakeStripe();
    const billing = { SVC_BILLING: 'stripe', STRIPE_SECRET_KEY: 'sk_test_openapiopenapi01', STRIPE_WEBHOOK_SECRET: 'whsec_openapiopenapi01', SVC_STRIPE_API_URL: stripe.url };
    svc = await startTestSvc({ DATABASE_URL: 'memory', ...billing }, 'all');
    const res = await fetch(`${svc.url}/openapi.json`);
    expect(res.status).toBe(200);
    spec = (await res.json()) as Spec;
  }, 60_000);
  afterAll(async () => {
    await svc?.stop();
    await stripe?.close();
  });

  const toOpenApi = (route: string) => route.replace(/:([A-Za-z0-9_]+)(\{[^}]*\})?/g, '{$1}').replace(/\/\*$/, '/{path}');

  it('is OpenAPI 3.1 and documents every route mounted under /api, /v1 and /chat', () => {
    expect(spec.openapi).toBe('3.1.0');
    const mounted = svc.server.built.app.routes.filter((r) => METHODS.includes(r.method) && DOCUMENTED.some((p) => r.path.startsWith(p)));
    expect(mounted.length).toBeGreaterThan(150);
    for (const r of mounted) expect(spec.paths[toOpenApi(r.path)]?.[r.method.toLowerCase()], `${r.method} ${r.path}`).toBeDefined();
    for (const prefix of DOCUMENTED) expect(Object.keys(spec.paths).some((p) => p.startsWith(prefix)), prefix).toBe(true);
    // nothing internal leaks into the public reference
    expect(Object.keys(spec.paths).filter((p) => !DOCUMENTED.some((d) => p.startsWith(d)))).toEqual([]);
  });

  it('is a valid OpenAPI 3.1 document (the official schema and the checks it cannot make: path parameters, unique operation ids)', async () => {
    const result = await validate(structuredClone(spec) as never);
    expect(result.valid ? [] : result.errors).toEqual([]);
  });

  it('documents every operation: a summary, a description and the schema of its JSON success answer', () => {
    const offenders: string[] = [];
    const byArea = new Map<string, number>();
    for (const [path, methods] of Object.entries(spec.paths)) {
      for (const [method, op] of Object.entries(methods)) {
        const lacks = undocumented(op);
        if (!lacks.length) continue;
        offenders.push(`${method.toUpperCase()} ${path}: no ${lacks.join(', no ')}`);
        const area = path.split('/').slice(0, 3).join('/');
        byArea.set(area, (byArea.get(area) ?? 0) + 1);
      }
    }
    const summary = [...byArea].sort((a, b) => b[1] - a[1]).map(([area, n]) => `${area}: ${n}`);
    expect(offenders, `${offenders.length} operations lack documentation (${summary.join(', ')}):\n${offenders.join('\n')}`).toEqual([]);
  });

  it('lets answers grow (no response schema forbids extra keys), says who may call, and speaks one JSON Schema dialect', () => {
    const closed: string[] = [];
    const walk = (node: unknown, where: string): void => {
      if (!node || typeof node !== 'object') return;
      if ((node as { additionalProperties?: unknown }).additionalProperties === false) closed.push(where);
      for (const [k, child] of Object.entries(node)) walk(child, `${where}.${k}`);
    };
    for (const [path, methods] of Object.entries(spec.paths)) for (const [method, op] of Object.entries(methods)) walk(op.responses, `${method} ${path}`);
    expect(closed).toEqual([]);
    // every schema is 2020-12, OpenAPI 3.1's own: none names another dialect
    expect(JSON.stringify(spec)).not.toContain('"$schema"');
    const raw = spec as unknown as { paths: Record<string, Record<string, { security: unknown[]; responses: Record<string, unknown> }>> };
    // a route that takes no credentials says so, without the answers of authenticated ones
    expect(raw.paths['/api/device/code']!.post!.security).toEqual([]);
    expect(Object.keys(raw.paths['/api/device/code']!.post!.responses)).not.toContain('401');
    // a change can be refused to a viewer's key; a read cannot
    expect(Object.keys(raw.paths['/api/runs']!.post!.responses)).toEqual(expect.arrayContaining(['202', '400', '401', '403']));
    expect(Object.keys(raw.paths['/api/runs']!.get!.responses)).not.toContain('403');
  });

  it('gives request bodies the schema their route validates with', () => {
    const runBody = spec.paths['/api/runs']!.post!.requestBody!.content['application/json']!.schema;
    expect(runBody.properties).toHaveProperty('profile');
    expect(runBody.required).toContain('profile');
    const agentBody = spec.paths['/v1/agents']!.post!.requestBody!.content['application/json']!.schema;
    expect(agentBody.properties).toHaveProperty('model');
    // an upload's parts, as multipart/form-data
    const upload = spec.paths['/v1/files']!.post!.requestBody!.content['multipart/form-data']!.schema;
    expect(upload.required).toEqual(['file', 'purpose']);
    expect(upload.properties!.file).toMatchObject({ type: 'string', contentMediaType: 'application/octet-stream' });
    expect(spec.paths['/api/skills/import']!.post!.requestBody!.content).toHaveProperty('multipart/form-data');
  });

  it('documents what a route without credentials and the Chat Completions face answer', () => {
    const shared = spec.paths['/api/public/kits/{id}']!.get! as Operation & { security?: unknown[] };
    expect(shared.security).toEqual([]);
    expect(Object.keys(shared.responses)).not.toContain('401');
    const stripeHook = spec.paths['/api/stripe/webhook']!.post! as Operation & { security?: unknown[] };
    expect(stripeHook.security).toEqual([]);
    const completions = spec.paths['/chat/{slug}/v1/chat/completions']!.post!;
    expect(completions.responses['400']!.content!['application/json']!.schema).toEqual({ $ref: '#/components/schemas/AgentsError' });
    expect(spec.paths['/api/runs']!.post!.responses['400']!.content!['application/json']!.schema).toEqual({ $ref: '#/components/schemas/Error' });
  });

  it('answers every documented operation: a JSON error at worst, never a 500 and never "no route"', async () => {
    const failures: string[] = [];
    for (const [path, methods] of Object.entries(spec.paths)) {
      const url = svc.url + path.replace(/\{[^}]+\}/g, 'nope');
      for (const method of Object.keys(methods)) {
        const upper = method.toUpperCase();
        const res = await fetch(url, {
          method: upper,
          headers: { authorization: `Bearer ${svc.key}`, 'content-type': 'application/json' },
          body: upper === 'GET' || upper === 'DELETE' ? undefined : '{}',
          signal: AbortSignal.timeout(15_000),
        });
        const text = res.headers.get('content-type')?.includes('event-stream') ? '' : await res.text();
        if (!res.bodyUsed) await res.body?.cancel();
        if (res.status >= 500 || /no route for/.test(text)) failures.push(`${upper} ${path} → ${res.status} ${text.slice(0, 200)}`);
      }
    }
    expect(failures).toEqual([]);
  }, 120_000);

  it('renders the reference at /docs and links it from the index', async () => {
    const res = await fetch(`${svc.url}/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await res.text();
    expect(html).toContain('<code>/api/runs</code>');
    expect(html).toContain('<code>/v1/agents</code>');
    // a documented answer is shown with its schema and its errors
    expect(html).toMatch(/<code>\/api\/runs<\/code><\/h3><p>Start a run<\/p>[\s\S]*?Answers <code>202<\/code>; errors <code[^>]*>400<\/code>/);
    expect(html).toContain('<summary>Answer (JSON)</summary>');
    const index = (await (await fetch(`${svc.url}/`)).json()) as { links: Record<string, string> };
    expect(index.links).toMatchObject({ docs: '/docs', openapi: '/openapi.json' });
  });
});
