import type { Context } from 'hono';
import { forbidden } from '../../../shared/errors.ts';
import type { PublishedRow } from './publishing.repo.ts';

/**
 * CORS for the chat gateway, per published agent: `allowedOrigins` lists the browser origins that may call it (`*`:
 * any). A request without `Origin` (a server, curl) is not a browser's and passes; the gateway's own origin (and the
 * SVC_CHAT_PUBLIC_URL one) always may. Any other origin gets no CORS grant and a 403, on the preflight and on the
 * request itself, so a page cannot even spend the agent's rate limit or credit.
 */
const ALLOW_HEADERS = 'authorization, content-type, accept, x-conversation-id';
const EXPOSE_HEADERS = 'x-conversation-id, retry-after';

function allowed(c: Context, agent: PublishedRow, origin: string, publicUrl: string | undefined): boolean {
  const list = agent.allowed_origins;
  if (list.includes('*') || list.includes(origin)) return true;
  const own = [new URL(c.req.url).origin, ...(publicUrl ? [new URL(publicUrl).origin] : [])];
  return own.includes(origin);
}

/** Grants CORS to an allowed browser origin (headers on the answer), 403 to any other. */
export function grantCors(c: Context, agent: PublishedRow, publicUrl: string | undefined): void {
  const origin = c.req.header('origin');
  if (origin === undefined) return;
  c.header('Vary', 'Origin');
  if (!allowed(c, agent, origin, publicUrl)) throw forbidden(`origin ${origin} may not call this agent (allowedOrigins)`);
  c.header('Access-Control-Allow-Origin', origin);
  c.header('Access-Control-Expose-Headers', EXPOSE_HEADERS);
}

/** The answer to a preflight: 204 with the grant, or 403. */
export function preflight(c: Context, agent: PublishedRow, publicUrl: string | undefined): Response {
  grantCors(c, agent, publicUrl);
  c.header('Access-Control-Allow-Methods', 'POST, GET, OPTIONS');
  c.header('Access-Control-Allow-Headers', ALLOW_HEADERS);
  c.header('Access-Control-Max-Age', '600');
  return c.body(null, 204);
}
