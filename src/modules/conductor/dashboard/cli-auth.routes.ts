import { Hono, type Context } from 'hono';
import { readForm } from '../../../shared/http.ts';
import { issueKey, type KeyDeps } from '../identity/index.ts';
import { escape, hidden, page } from './html.ts';
import type { SessionCodec } from './session.ts';
import { signInUrl } from './sign-in.routes.ts';

/** What the CLI put in the link: its loopback port, a state to match, and the label for the new key. */
interface LoginRequest {
  port: number;
  state: string;
  label: string;
}

function readRequest(raw: Record<string, unknown>): LoginRequest | undefined {
  const port = Number(raw.port);
  const state = typeof raw.state === 'string' ? raw.state : '';
  const label = typeof raw.label === 'string' && raw.label.trim() ? raw.label.trim().slice(0, 200) : 'svc-cli';
  if (!Number.isInteger(port) || port < 1 || port > 65535 || !/^[A-Za-z0-9_-]{16,128}$/.test(state)) return undefined;
  return { port, state, label };
}

const malformed = (c: Context) =>
  page(c, 'Invalid login link', '<h1>Invalid login link</h1><p>This link is missing its port or state. Run <code>svc auth login</code> again.</p>', { status: 400 });

/** The page that hands the result to the CLI: a form posted to its loopback listener, submitted at once. */
function handOff(c: Context, req: LoginRequest, fields: Record<string, string>, title: string, message: string): Response {
  const action = `http://127.0.0.1:${req.port}/callback`;
  const body = `<h1>${escape(title)}</h1><p>${escape(message)}</p>
<form method="post" action="${escape(action)}">${hidden({ state: req.state, ...fields })}<noscript><button type="submit">Continue to the CLI</button></noscript></form>`;
  return page(c, title, body, { formAction: `http://127.0.0.1:${req.port}`, script: 'document.forms[0].submit();' });
}

/**
 * `/cli-auth`: the browser half of `svc auth login`. GET shows "Approve svc CLI login" to the signed-in user; POST
 * approves (mints a key with the user's role, labelled as the CLI asked) or denies, and posts the result back to the
 * CLI's listener on 127.0.0.1.
 */
export function cliAuthRoutes(deps: { sessions: SessionCodec; keyDeps: KeyDeps }): Hono {
  const { sessions } = deps;
  return new Hono()
    .get('/', async (c) => {
      const req = readRequest(c.req.query());
      if (!req) return malformed(c);
      const p = await sessions.open(c);
      if (!p) return c.redirect(signInUrl(c), 303);
      const body = `<h1>Approve svc CLI login</h1>
<p>A command-line client on this computer asks for a new API key.</p>
<dl><dt>Organization</dt><dd>${escape(p.tenantId)}</dd><dt>Role</dt><dd>${escape(p.role)}</dd><dt>Key label</dt><dd>${escape(req.label)}</dd><dt>Listener</dt><dd>127.0.0.1:${req.port}</dd></dl>
<p class="muted">Approve only if you just ran <code>svc auth login</code>.</p>
<form method="post" action="/cli-auth">${hidden({ port: String(req.port), state: req.state, label: req.label, csrf: sessions.csrf(c) })}
<button type="submit" name="decision" value="approve">Approve</button><button class="secondary" type="submit" name="decision" value="deny">Deny</button></form>`;
      return page(c, 'Approve svc CLI login', body);
    })
    .post('/', async (c) => {
      const form = await readForm(c);
      const req = readRequest(form);
      if (!req) return malformed(c);
      const p = await sessions.open(c);
      if (!p) return c.redirect(signInUrl(c), 303);
      if (!sessions.checkCsrf(c, form.csrf)) return page(c, 'Expired form', '<h1>This form expired</h1><p>Go back and reload the page.</p>', { status: 403 });
      if (form.decision !== 'approve') return handOff(c, req, { error: 'access_denied' }, 'Login denied', 'Telling the CLI…');
      const key = await issueKey(deps.keyDeps, p, { name: req.label });
      return handOff(c, req, { apiKey: key.token, keyId: key.id, role: key.role, org: key.tenantId }, 'Login approved', 'Handing the key to the CLI…');
    });
}
