import fc from 'fast-check';

/**
 * Generated malformed HTTP requests for one route pattern (`/api/runs/:id`, `/v1/…/*`): path parameters filled with
 * real ids, odd strings and bad percent-encoding; odd query values; bodies of bad JSON, wrong types, huge and deeply
 * nested values, NUL characters and bytes, invalid UTF-8, broken forms; odd content types; the route's method or a
 * random one; authenticated (the instance's credential), unauthenticated or with a garbage bearer.
 */
export interface FuzzRequest {
  method: string;
  /** Path and query, ready to append to the base URL (already percent-encoded where meant to be). */
  url: string;
  headers: Record<string, string>;
  body: string | Uint8Array | undefined;
}

/** Strings that have broken parsers elsewhere; each is used raw or percent-encoded depending on where it goes. */
const NASTY = [
  '', ' ', 'null', 'undefined', 'true', '0', '-1', '1.5', '1e309', 'NaN', '9007199254740993', '-0',
  '\u0000', 'a\u0000b', '\ud800', '\udfff\ud800', '𝔘𝔫𝔦𝔠𝔬𝔡𝔢', 'é', '\r\n', '\t',
  '..', '.', '../..', '../../etc/passwd', '/', '//', '\\', '*', '?', '#', '&', '=', ';', ',',
  '<script>alert(1)</script>', "' OR 1=1 --", '${7*7}', '{{7*7}}', '%s%s%s%n', '[]', '{}', '[object Object]',
  'ao_test_' + 'x'.repeat(32), 'Bearer x', 'sess-00000000-x', 'run_x', 'a'.repeat(300), 'b'.repeat(5000),
];
/** Percent-encodings that do not decode (or decode to something odd), inserted into the URL as they are. */
const BAD_PERCENT = ['%', '%%', '%zz', '%0', '%E0%A4%A', '%C0%AF', '%FF%FE', '%ED%A0%80', '%00', '%2e%2e', '%2F', '%5C', '%252e', '%u0041'];
/** Query names the routes read (paging, streams, filters, dashboard links) plus arbitrary ones. */
const QUERY_NAMES = ['runtime', 'limit', 'offset', 'after', 'before', 'order', 'q', 'lastEventId', 'includeDeleted', 'next', 'port', 'state', 'label', 'code', 'window', 'since', 'until', 'profile', 'group', 'agent_id', 'purpose', 'include', 'stream', 'page', 'cursor'];
/** Body fields the routes read; random JSON goes under them so validation is reached, not only the JSON parser. */
const FIELDS = [
  'name', 'id', 'profile', 'profileName', 'sessionId', 'parentId', 'prompt', 'title', 'files', 'runtime', 'model', 'tools', 'skills', 'mcpServers', 'fs',
  'metadata', 'expiresAt', 'key', 'events', 'input', 'toolName', 'text', 'environment', 'agent', 'agent_id', 'members', 'description', 'body', 'label',
  'tenantId', 'amountMicroUSD', 'monthlyCapCents', 'channel', 'message', 'subTask', 'stateB64', 'subtask', 'sessionMcpUrl', 'auth', 'type', 'config',
  'jsonrpc', 'method', 'params', 'device_code', 'user_code', 'grant_type', 'vault_ids', 'content', 'path', 'data',
];
const CONTENT_TYPES = [
  'application/json', 'application/json; charset=utf-8', 'application/json; charset=utf-16', 'text/plain', 'text/html', 'application/xml',
  'multipart/form-data', 'multipart/form-data; boundary=fuzz', 'multipart/form-data; boundary=', 'application/x-www-form-urlencoded',
  'application/octet-stream', 'application/gzip', 'application/x-ndjson', 'text/event-stream', 'garbage', '*/*; q=x', 'application/json;;;',
];
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD', 'PURGE'];

/** Header-safe strings (fetch refuses CR, LF and NUL in header values). */
const headerValue = fc.oneof(fc.stringMatching(/^[\x20-\x7e]{0,60}$/), fc.constantFrom('-1', '0', '1e9', 'x', '9'.repeat(40), '%00'));

const text = fc.oneof(fc.constantFrom(...NASTY), fc.string(), fc.string({ unit: 'binary', maxLength: 40 }));
/** Percent-encodes any string; a lone surrogate (which UTF-8 cannot carry) becomes U+FFFD. */
const encode = (s: string) => encodeURIComponent(s.toWellFormed());

/** A path segment: a real id, a generated string (percent-encoded, so it reaches the handler decoded), or raw bad %. */
function segment(realIds: readonly string[]): fc.Arbitrary<string> {
  const real = realIds.length ? [fc.constantFrom(...realIds).map(encode)] : [];
  return fc.oneof({ weight: 3, arbitrary: text.map((s) => encode(s) || 'x') }, { weight: 2, arbitrary: fc.constantFrom(...BAD_PERCENT) }, ...real.map((arbitrary) => ({ weight: 3, arbitrary })));
}

/** Values some query parameters must have to get past their first check (the worker's `runtime` in MODE all). */
const QUERY_VALUES: Record<string, string[]> = { runtime: ['general', 'runtime_a', 'runtime_b'], limit: ['1', '20'], offset: ['0', '1'], includeDeleted: ['1'] };
const queryPair = fc.oneof(
  fc.constantFrom(...Object.entries(QUERY_VALUES).flatMap(([k, values]) => values.map((v) => [k, v] as [string, string]))),
  fc.tuple(fc.oneof(fc.constantFrom(...QUERY_NAMES), fc.string({ maxLength: 10 })), fc.oneof(text.map(encode), fc.constantFrom(...BAD_PERCENT))),
);
const query = fc
  .array(queryPair, { maxLength: 4 })
  .map((pairs) => (pairs.length ? '?' + pairs.map(([k, v]) => `${encode(k)}=${v}`).join('&') : ''));

/** JSON text nested `depth` levels (objects or arrays), built as text so the generator itself never recurses. */
const depth = fc.oneof(fc.constantFrom(65, 1001, 5000, 8000), fc.integer({ min: 60, max: 8000 }));
const deepObject = depth.map((d) => '{"a":'.repeat(d - 1) + '{}' + '}'.repeat(d - 1));
const deepJson = fc.oneof(deepObject, depth.map((d) => '['.repeat(d) + ']'.repeat(d)));
const jsonValue = fc.oneof(
  { weight: 4, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v) ?? 'null') },
  { weight: 1, arbitrary: deepJson },
  { weight: 1, arbitrary: text.map((s) => JSON.stringify(s)) },
  { weight: 1, arbitrary: fc.constantFrom('"\\u0000"', '"a\\u0000"', '"\\ud800"', '1e999', '-1', '0.5', '[]', '{}', 'null', '"' + 'x'.repeat(100_000) + '"') },
);
/** An object of known fields with arbitrary (sometimes deep or hostile) values: reaches the schemas behind the parser. */
const fieldsObject = fc
  .array(fc.tuple(fc.constantFrom(...FIELDS), jsonValue), { minLength: 1, maxLength: 5 })
  .map((pairs) => '{' + pairs.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',') + '}');

/**
 * Values that pass the schemas of many routes at once (valibot objects drop unknown keys), so a body of them reaches
 * the service behind validation; `plausibleObject` then makes some fields hostile. Object- and array-valued fields
 * (`metadata`, `fs`, `params`, …) are where free-form JSON goes, so they turn hostile, mostly deep, far more often.
 */
const VALID: Record<string, unknown[]> = {
  name: ['fuzz-name'], id: ['fuzz-id-1', 'fuzz-id-2'], profile: ['p'], profileName: ['p'], prompt: ['hello'], title: ['t'], files: [[]],
  runtime: ['general'], model: ['demo:echo', 'svc/demo/echo'], tools: [[]], skills: [[]], mcpServers: [[]], fs: [{}], metadata: [{}],
  expiresAt: ['2099-01-01T00:00:00Z'], key: ['sk-fuzz-key'], events: [[{ type: 'agent.session.input.cancel' }]], input: ['hello', {}],
  toolName: ['fs_list'], text: [{ format: { type: 'text' } }], environment: [{ type: 'none' }], members: [[{ profile: 'p' }]], description: ['d'],
  label: ['l'], tenantId: ['default'], amountMicroUSD: [1], channel: ['email'], message: ['m'], subTask: [{ profile: 'p' }], subtask: [{ title: 't', prompt: 'p' }],
  jsonrpc: ['2.0'], method: ['tools/list', 'tools/call', 'initialize'], params: [{}], type: ['function', 'mcp'], sessionMcpUrl: ['http://127.0.0.1:1/'],
  config: [{}], path: ['/workspace/a.txt'], content: ['x'], data: ['aGk='], stateB64: [''],
};
const plausibleObject = fc
  .record(
    Object.fromEntries(
      Object.entries(VALID).map(([field, values]) => {
        const structured = typeof values[0] === 'object';
        const valid = fc.constantFrom(...values).map((v) => JSON.stringify(v));
        const hostile = structured ? fc.oneof({ weight: 3, arbitrary: deepObject }, { weight: 1, arbitrary: deepJson }, { weight: 1, arbitrary: jsonValue }) : jsonValue;
        return [field, fc.oneof({ weight: 1, arbitrary: fc.constant(undefined) }, { weight: structured ? 2 : 8, arbitrary: valid }, { weight: structured ? 5 : 1, arbitrary: hostile })];
      }),
    ),
  )
  .map((fields) => '{' + Object.entries(fields).flatMap(([k, v]) => (v === undefined ? [] : [`${JSON.stringify(k)}:${v}`])).join(',') + '}');

const body: fc.Arbitrary<string | Uint8Array | undefined> = fc.oneof(
  { weight: 2, arbitrary: fc.constant(undefined) },
  { weight: 6, arbitrary: plausibleObject },
  { weight: 3, arbitrary: fieldsObject },
  { weight: 2, arbitrary: jsonValue },
  { weight: 2, arbitrary: fc.constantFrom('', ' ', '{', '{"a":', '{"a":1,}', "{'a':1}", '[1,2', 'nul', '{"a":1}garbage', '\u0000', '{"a":"\u0000"}', '\ufeff{}', '--fuzz\r\n\r\n--fuzz--') },
  { weight: 1, arbitrary: text },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }) },
  { weight: 1, arbitrary: fc.constantFrom(new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]), new Uint8Array([0xc0, 0xaf]), new Uint8Array([0x1f, 0x8b, 0x08, 0, 0])) },
  { weight: 1, arbitrary: fc.constantFrom('key=%zz&next=%', 'a=1&a=2&a', '=&&==', '%', 'decision=approve&csrf=x&port=99999&state=' + 'x'.repeat(20)) },
  // about 1.2 MiB: past the 1 MiB body limit of /api and /v1
  { weight: 1, arbitrary: fc.constant(`{"name":"${'x'.repeat(1_250_000)}"}`) },
);

/** Requests for `method` `pattern` (Hono's route path: `:name` params, `*` wildcards). */
export function requestsFor(method: string, pattern: string, opts: { realIds: readonly string[]; auth: Record<string, string> }): fc.Arbitrary<FuzzRequest> {
  const params = pattern.split('/').filter((p) => p.startsWith(':') || p === '*').length;
  const methodArb = method === 'ALL' ? fc.constantFrom(...METHODS) : fc.oneof({ weight: 5, arbitrary: fc.constant(method) }, { weight: 1, arbitrary: fc.constantFrom(...METHODS) });
  const authArb = fc.oneof({ weight: 8, arbitrary: fc.constant(opts.auth) }, { weight: 1, arbitrary: fc.constant({}) }, { weight: 1, arbitrary: headerValue.map((v) => ({ authorization: `Bearer ${v}` })) });
  const extra = fc.record(
    { 'content-type': fc.constantFrom(...CONTENT_TYPES), 'last-event-id': headerValue, 'idempotency-key': headerValue, accept: fc.constantFrom('application/json', 'text/event-stream', '*/*', 'text/html') },
    { requiredKeys: [] },
  );
  return fc
    .record({ method: methodArb, values: fc.array(segment(opts.realIds), { minLength: params, maxLength: params }), query, auth: authArb, extra, body })
    .map(({ method: m, values, query: q, auth, extra: headers, body: b }) => {
      let i = 0;
      const path = pattern
        .split('/')
        .map((part) => (part.startsWith(':') || part === '*' ? values[i++] : part))
        .join('/');
      const hasBody = m !== 'GET' && m !== 'HEAD' && b !== undefined;
      return { method: m, url: path + q, headers: { ...headers, ...auth }, body: hasBody ? b : undefined };
    });
}

/** A short, printable description of a request for failure reports (bodies can be megabytes). */
export function describeRequest(r: FuzzRequest): string {
  const body = r.body === undefined ? '' : typeof r.body === 'string' ? r.body : `<${r.body.length} bytes: ${Buffer.from(r.body).toString('hex').slice(0, 80)}>`;
  const shown = body.length > 300 ? `${body.slice(0, 300)}… (${body.length} chars)` : body;
  return `${r.method} ${r.url.length > 300 ? r.url.slice(0, 300) + '…' : r.url} ${JSON.stringify({ ...r.headers, authorization: r.headers.authorization ? '<set>' : undefined })} ${shown}`;
}
