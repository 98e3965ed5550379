import { createServer, type Server } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import { describeError } from '../../../../shared/errors.ts';
import type { SessionRecord } from '../../sessions/sessions.store.ts';

/**
 * A sandbox worker's one way out: a unix socket per session on which the runner answers that session's callbacks and
 * MCP endpoint, and forwards `/provider/<name>/…` to the session's own model provider (and `/provider/override/…` to
 * the active run's per-run model address). Anything else is 404, so a worker reaches no other session, no internal
 * runner route and no other address. The worker never holds the runner's provider key: its key variable holds
 * RELAY_KEY_PLACEHOLDER, which the runner replaces with the real key in the headers it forwards to the provider.
 */
export interface SocketSession {
  sessionId: string;
  /** The profile's model provider (`openai-compatible` of `openai-compatible:model`). */
  provider: string | undefined;
  /** Read per request: the active run's per-run model base URL, if any. */
  override(): string | undefined;
}

/** Each model provider's variables: base URL, key, and the default base URL where the provider has one. */
export const PROVIDER_VARS: Record<string, { base: string; key: string; defaultBase?: string }> = {
  openai: { base: 'OPENAI_BASE_URL', key: 'OPENAI_API_KEY', defaultBase: 'https://api.openai.com/v1' },
  anthropic: { base: 'ANTHROPIC_BASE_URL', key: 'ANTHROPIC_API_KEY', defaultBase: 'https://api.anthropic.com/v1' },
  'openai-compatible': { base: 'OPENAI_COMPATIBLE_BASE_URL', key: 'OPENAI_COMPATIBLE_API_KEY' },
};

/**
 * The session's model provider: `runtime_a` (Claude Code) talks to anthropic and `runtime_b` (Codex) to openai; the
 * `general` runtime names it in the model (`openai-compatible` of `openai-compatible:fake-model`).
 */
export function providerOf(rec: SessionRecord): string | undefined {
  if (rec.runtime === 'runtime_a') return 'anthropic';
  if (rec.runtime === 'runtime_b') return 'openai';
  const model = rec.profile.model ?? '';
  const name = model.slice(0, Math.max(0, model.indexOf(':')));
  return Object.hasOwn(PROVIDER_VARS, name) ? name : undefined;
}

/**
 * What a sandbox worker holds in place of the runner's provider key (its SDKs need a key to send a request at all);
 * the socket puts the real key where this appears in a forwarded request's headers (`Authorization: Bearer …`,
 * `x-api-key: …`).
 */
export const RELAY_KEY_PLACEHOLDER = 'svc-relay-adds-the-key';

/**
 * The worker's provider variables: its own provider only, its address through the socket, and a placeholder key when
 * the runner has a key for it (never the key itself).
 */
export function providerEnvFor(provider: string | undefined, providerEnv: Readonly<Record<string, string>>, runnerUrl: string): Record<string, string> {
  const vars = provider ? PROVIDER_VARS[provider] : undefined;
  if (!vars || !(providerEnv[vars.base] || vars.defaultBase)) return {};
  const env: Record<string, string> = { [vars.base]: `${runnerUrl}/provider/${provider}` };
  if (providerEnv[vars.key]) env[vars.key] = RELAY_KEY_PLACEHOLDER;
  return env;
}

export async function listenWorkerSocket(
  path: string,
  session: SocketSession,
  deps: { providerEnv: Readonly<Record<string, string>>; callbacks: (req: Request) => Response | Promise<Response> },
): Promise<Server> {
  const id = encodeURIComponent(session.sessionId);

  async function forwardToProvider(name: string, rest: string, search: string, req: Request): Promise<Response> {
    const vars = PROVIDER_VARS[name];
    const base = vars && (deps.providerEnv[vars.base] || vars.defaultBase);
    if (!base) return Response.json({ error: `model provider ${name} is not configured on this runner` }, { status: 404 });
    return forward(base, `model provider ${name}`, rest, search, req, deps.providerEnv[vars.key]);
  }

  const handler = async (req: Request): Promise<Response> => {
    const url = new URL(req.url);
    const provider = /^\/provider\/([a-z-]+)(\/.*)?$/.exec(url.pathname);
    const override = session.override();
    if (provider && provider[1] === 'override' && override) return forward(override, "the run's model", provider[2] ?? '', url.search, req);
    if (provider && provider[1] === session.provider) return forwardToProvider(provider[1], provider[2] ?? '', url.search, req);
    // the session's MCP endpoint, and the MCP servers the runner fronts for its run beside it
    if (url.pathname.startsWith(`/worker/sessions/${id}/`) || url.pathname === `/runner/sessions/${id}/mcp` || url.pathname.startsWith(`/runner/sessions/${id}/mcp/server/`)) return deps.callbacks(req);
    return Response.json({ error: `not reachable from a sandbox worker: ${url.pathname}` }, { status: 404 });
  };

  const server = createServer(getRequestListener(handler));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => resolve());
  });
  return server;
}

/** Forwards a worker's request to `base`; with `key`, the runner's key replaces the placeholder in its headers. */
async function forward(base: string, name: string, rest: string, search: string, req: Request, key?: string): Promise<Response> {
  const headers = new Headers(req.headers);
  headers.delete('host');
  headers.delete('connection');
  if (key) for (const [header, value] of [...headers]) if (value.includes(RELAY_KEY_PLACEHOLDER)) headers.set(header, value.replaceAll(RELAY_KEY_PLACEHOLDER, key));
  try {
    const res = await fetch(base.replace(/\/+$/, '') + rest + search, {
      method: req.method,
      headers,
      body: req.body,
      signal: req.signal,
      ...(req.body ? { duplex: 'half' } : {}),
    } as RequestInit);
    const out = new Headers(res.headers);
    // fetch has decoded the body already
    out.delete('content-encoding');
    out.delete('content-length');
    return new Response(res.body, { status: res.status, headers: out });
  } catch (err) {
    return Response.json({ error: `${name} unreachable: ${describeError(err)}` }, { status: 502 });
  }
}
