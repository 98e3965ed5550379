import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { openSse } from './fake-provider/sse.ts';
import { lastInput, planFor, type LastInput, type Wire } from './fake-provider/script.ts';
import { streamChat, jsonChat, chatError, type ChatDialect, type ReplyContext } from './fake-provider/chat.ts';
import { streamResponses, jsonResponses, responsesError } from './fake-provider/responses.ts';
import { streamAnthropic, jsonAnthropic, anthropicError } from './fake-provider/anthropic.ts';
import { streamGemini, jsonGemini, geminiError } from './fake-provider/gemini.ts';
import { streamBedrock, jsonBedrock, bedrockError, bedrockErrorType, openEventStream } from './fake-provider/bedrock.ts';

/**
 * A fake model provider for tests and benchmarks: one node:http server on 127.0.0.1 speaking the OpenAI Chat
 * Completions, OpenAI Responses and Anthropic Messages wires (RUNTIMES.md §2, §3, §6), Google's Gemini
 * generateContent SSE and Amazon Bedrock's Converse event stream (their documented formats), scripted from the prompt:
 * `CALL_TOOL <name> <json>` (several CALL_TOOL lines: parallel calls in one reply, Chat wire only), `CALL_CUSTOM <name> <json string>` (Responses freeform tools such as Codex's apply_patch),
 * `FAIL_HTTP_<code>`, `FAIL_FIRST_<n>_HTTP_<code>[_RETRY_AFTER_<s>]`, `HUGE_REPLY <MiB>` (one delta that big), `RESET_AFTER_FIRST`, `SLOW_DELTAS <n> <ms>`, `DELTAS <n>`, `HANG_AFTER_FIRST`, `HOLD <name>` (the reply waits for
 * `release(name)`, so a test can change the world between a model request and its answer); a request that asks for
 * reasoning (Responses `reasoning.summary`, Anthropic `thinking`) gets a two-part reasoning summary (FAKE_REASONING)
 * before its answer, streamed on that wire; a tool result answers
 * `TOOL-RESULT-SEEN: <text>`; anything else `FAKE-REPLY: <prompt>`. Every request is logged.
 */
export { lastInput, planFor, stripReminders, textOf, type LastInput, type Wire } from './fake-provider/script.ts';

export interface LoggedRequest {
  method: string;
  path: string;
  wire: Wire | 'count_tokens' | 'models' | 'unknown';
  headers: Record<string, string>;
  body: any;
  /** True once the client hung up before the reply was complete (cancel tests assert on this, not on time). */
  clientClosedEarly: boolean;
}

export interface FakeProvider {
  /** Base URL with `/v1`, as the AI SDK providers and Codex expect it. */
  url: string;
  /** Base URL without `/v1` (Claude Code appends `/v1/messages` itself). */
  origin: string;
  requests: LoggedRequest[];
  /** Lets the replies held by a `HOLD <name>` prompt go (and any later ones with that name). */
  release(name: string): void;
  /** Resolves with the first truthy value of `probe`, re-checked after every request and every disconnect. */
  when<T>(probe: () => T | undefined | null | false): Promise<T>;
  close(): Promise<void>;
}

const LOGGED_HEADERS = ['content-type', 'accept', 'authorization', 'x-api-key', 'x-goog-api-key', 'api-key', 'x-amz-date', 'anthropic-version', 'anthropic-beta', 'user-agent', 'session-id', 'x-claude-code-session-id', 'originator'];

function classify(method: string, path: string): LoggedRequest['wire'] {
  if (method === 'GET' && path.endsWith('/models')) return 'models';
  if (method !== 'POST') return 'unknown';
  if (path.endsWith('/chat/completions')) return 'chat';
  if (path.endsWith('/responses')) return 'responses';
  if (path.endsWith('/messages/count_tokens')) return 'count_tokens';
  if (path.endsWith('/messages')) return 'anthropic';
  if (/:(stream)?[gG]enerateContent$/.test(path)) return 'gemini';
  if (path.endsWith('/converse-stream') || path.endsWith('/converse')) return 'bedrock';
  return 'unknown';
}

/** Mistral and Groq serve the Chat wire on their own hosts; on this one host their packages' user agents tell them apart. */
function chatDialect(userAgent: string | undefined): ChatDialect {
  if (/\bai-sdk-mistral\//.test(userAgent ?? '')) return 'mistral';
  if (/\bai-sdk-groq\//.test(userAgent ?? '')) return 'groq';
  return 'openai';
}

async function readBody(req: IncomingMessage): Promise<any> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/** Per wire: the reply writers, the error body, extra error headers, whether a request streams, the stream opener. */
interface WireImpl {
  stream: typeof streamChat;
  json: typeof jsonChat;
  error: (status: number) => unknown;
  errorHeaders?: (status: number) => Record<string, string>;
  streams?: (path: string, body: any) => boolean;
  open?: typeof openSse;
}

const WIRES: Record<Wire, WireImpl> = {
  chat: { stream: streamChat, json: jsonChat, error: chatError },
  responses: { stream: streamResponses, json: jsonResponses, error: responsesError },
  anthropic: { stream: streamAnthropic, json: jsonAnthropic, error: anthropicError },
  gemini: { stream: streamGemini, json: jsonGemini, error: geminiError, streams: (path) => path.endsWith(':streamGenerateContent') },
  bedrock: {
    stream: streamBedrock,
    json: jsonBedrock,
    error: bedrockError,
    errorHeaders: (status) => ({ 'x-amzn-errortype': bedrockErrorType(status) }),
    streams: (path) => path.endsWith('/converse-stream'),
    open: openEventStream,
  },
};

export async function startFakeProvider(): Promise<FakeProvider> {
  const requests: LoggedRequest[] = [];
  const waiters = new Set<() => void>();
  const notify = () => waiters.forEach((check) => check());
  let counter = 0;
  const failuresServed = new Map<string, number>();
  const holds = new Map<string, { released: Promise<void>; release: () => void }>();
  const hold = (name: string) => {
    let h = holds.get(name);
    if (!h) {
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      holds.set(name, (h = { released, release }));
    }
    return h;
  };

  const server = createServer(async (req, res) => {
    const path = new URL(req.url ?? '/', 'http://fake').pathname;
    const method = req.method ?? 'GET';
    const wire = classify(method, path);
    const headers: Record<string, string> = {};
    for (const name of LOGGED_HEADERS) if (typeof req.headers[name] === 'string') headers[name] = req.headers[name] as string;
    const logged: LoggedRequest = { method, path, wire, headers, body: await readBody(req), clientClosedEarly: false };
    requests.push(logged);
    res.on('close', () => {
      if (!res.writableFinished) {
        logged.clientClosedEarly = true;
        notify();
      }
    });
    notify();

    if (wire === 'models') return sendJson(res, 200, { object: 'list', data: [{ id: 'fake-model', object: 'model', type: 'model', display_name: 'Fake model', created: 0, created_at: '2026-01-01T00:00:00Z', owned_by: 'fake' }], has_more: false });
    if (wire === 'count_tokens') return sendJson(res, 200, { input_tokens: JSON.stringify(logged.body ?? '').length >> 2 });
    if (wire === 'unknown') return sendJson(res, 404, { error: { message: `fake provider: no route for ${method} ${path}` } });

    const impl = WIRES[wire];
    const streaming = impl.streams ? impl.streams(path, logged.body) : logged.body?.stream === true;
    const open = impl.open ?? openSse;
    const input = lastInput(wire, logged.body);
    const held = input?.kind === 'user' ? /\bHOLD\s+(\w+)/.exec(input.text) : null;
    if (held) await hold(held[1]).released;
    const requestId = `req_fake_${++counter}`;
    // FAIL_FIRST_<n>_HTTP_<code>[_RETRY_AFTER_<s>]: the first n requests with this prompt fail (a rate limit or an
    // outage that passes), the next ones are answered as the rest of the prompt says.
    const failFirst = input?.kind === 'user' ? /FAIL_FIRST_(\d+)_HTTP_(\d{3})(?:_RETRY_AFTER_(\d+))?/.exec(input.text) : null;
    if (failFirst && input) {
      const seen = (failuresServed.get(input.text) ?? 0) + 1;
      failuresServed.set(input.text, seen);
      if (seen <= Number(failFirst[1])) {
        const status = Number(failFirst[2]);
        return sendJson(res, status, impl.error(status), { 'request-id': requestId, ...impl.errorHeaders?.(status), ...(failFirst[3] ? { 'retry-after': failFirst[3] } : {}) });
      }
    }
    // RESET_AFTER_FIRST: one delta, then the connection is torn down (a reset mid-stream).
    if (input?.kind === 'user' && input.text.includes('RESET_AFTER_FIRST') && streaming) {
      const out = open(res, { 'request-id': requestId });
      void impl.stream(out, { kind: 'hang', first: 'd0 ' }, { model: String(logged.body?.model ?? 'fake-model'), id: `fake${counter}`, includeUsage: false }).catch(() => {});
      // The first delta is queued on the socket; ending the socket (not the response) cuts the chunked body short.
      setImmediate(() => res.socket?.end());
      return;
    }
    const plan = planFor(failFirst && input ? { ...input, text: input.text.replace(failFirst[0], '') } : input);
    // A short retry-after-ms (as OpenAI sends) keeps clients that retry failures from backing off for seconds.
    if (plan.kind === 'fail') return sendJson(res, plan.status, impl.error(plan.status), { 'request-id': requestId, 'retry-after-ms': '10', ...impl.errorHeaders?.(plan.status) });
    const reasoning = (wire === 'responses' && logged.body?.reasoning?.summary != null) || (wire === 'anthropic' && logged.body?.thinking?.type === 'enabled');
    const ctx: ReplyContext = { model: String(logged.body?.model ?? 'fake-model'), id: `fake${counter}`, includeUsage: logged.body?.stream_options?.include_usage === true, dialect: chatDialect(headers['user-agent']), reasoning };
    if (!streaming) {
      if (plan.kind === 'hang') return; // a non-streaming hang: never answer until the client gives up
      return sendJson(res, 200, impl.json(plan, ctx), { 'request-id': requestId });
    }
    await impl.stream(open(res, { 'request-id': requestId }), plan, ctx);
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;
  return {
    url: `${origin}/v1`,
    origin,
    requests,
    release: (name) => hold(name).release(),
    when<T>(probe: () => T | undefined | null | false) {
      return new Promise<T>((resolve) => {
        const check = () => {
          const value = probe();
          if (value) {
            waiters.delete(check);
            resolve(value);
          }
        };
        waiters.add(check);
        check();
      });
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const isModelWire = (wire: LoggedRequest['wire']): wire is Wire => Object.hasOwn(WIRES, wire);

/** The model requests (any wire) in the log, oldest first. */
export function modelRequests(fake: Pick<FakeProvider, 'requests'>): LoggedRequest[] {
  return fake.requests.filter((r) => isModelWire(r.wire));
}

/** The last user prompt or tool result a logged model request carried (what the fake scripted its reply from). */
export function lastInputOf(request: LoggedRequest): LastInput | undefined {
  if (!isModelWire(request.wire)) return undefined;
  return lastInput(request.wire, request.body);
}

/** The last user prompt of a logged model request, or undefined when its last input was a tool result. */
export function lastUserPrompt(request: LoggedRequest): string | undefined {
  const input = lastInputOf(request);
  return input?.kind === 'user' ? input.text : undefined;
}

/**
 * Provider variables pointing every provider of the general runtime at one fake, each with a fake key, so a
 * profile's model picks the wire format (Bedrock signs with SigV4 for us-east-1; Azure takes a custom base URL).
 */
export function fakeProviderEnv(fake: Pick<FakeProvider, 'url' | 'origin'>): Record<string, string> {
  return {
    OPENAI_BASE_URL: fake.url,
    OPENAI_API_KEY: 'fake',
    ANTHROPIC_BASE_URL: fake.url,
    ANTHROPIC_API_KEY: 'fake',
    OPENAI_COMPATIBLE_BASE_URL: fake.url,
    OPENAI_COMPATIBLE_API_KEY: 'fake',
    GOOGLE_GENERATIVE_AI_BASE_URL: `${fake.origin}/v1beta`,
    GOOGLE_GENERATIVE_AI_API_KEY: 'fake',
    AWS_ENDPOINT_URL_BEDROCK_RUNTIME: fake.origin,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'AKIAFAKE',
    AWS_SECRET_ACCESS_KEY: 'fake',
    AZURE_BASE_URL: `${fake.origin}/openai`,
    AZURE_API_KEY: 'fake',
    MISTRAL_BASE_URL: fake.url,
    MISTRAL_API_KEY: 'fake',
    XAI_BASE_URL: fake.url,
    XAI_API_KEY: 'fake',
    GROQ_BASE_URL: fake.url,
    GROQ_API_KEY: 'fake',
    OPENROUTER_BASE_URL: fake.url,
    OPENROUTER_API_KEY: 'fake',
  };
}
