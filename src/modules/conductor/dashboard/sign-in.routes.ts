import { Hono, type Context } from 'hono';
import { isAppError } from '../../../shared/errors.ts';
import { readForm } from '../../../shared/http.ts';
import { hasRole, type Principal } from '../identity/index.ts';
import { escape, hidden, page } from './html.ts';
import type { SessionCodec } from './session.ts';

/** Only same-site paths may be a post-sign-in destination (no `//host`, no scheme). */
export function safeNext(raw: unknown): string {
  return typeof raw === 'string' && raw.startsWith('/') && !raw.startsWith('//') && !raw.includes('\\') ? raw : '/dashboard';
}

export function signInUrl(c: Context): string {
  const url = new URL(c.req.url);
  return `/dashboard/sign-in?next=${encodeURIComponent(url.pathname + url.search)}`;
}

function signInForm(c: Context, next: string, error?: string, status?: number): Response {
  const body = `<h1>Sign in to svc</h1>
<p class="muted">Sign in with a tenant API key (<code>ao_…</code>) of role member or higher. Approving a CLI login mints a new key with the same role.</p>
${error ? `<p class="error" role="alert">${escape(error)}</p>` : ''}
<form method="post" action="/dashboard/sign-in">${hidden({ next })}
<label for="key">API key</label><input id="key" name="key" type="password" autocomplete="off" required autofocus>
<button type="submit">Sign in</button></form>`;
  return page(c, 'Sign in', body, { status });
}

/**
 * `/dashboard/sign-in` (GET form, POST key → session cookie) and `/dashboard/sign-out` (a form with the CSRF token).
 * The dashboard's pages (app.routes.ts) and `svc auth login`'s browser approval start here.
 */
export function signInRoutes(deps: { sessions: SessionCodec; authenticate(header: string): Promise<Principal> }): Hono {
  const { sessions } = deps;
  return new Hono()
    .get('/sign-in', async (c) => signInForm(c, safeNext(c.req.query('next'))))
    .post('/sign-in', async (c) => {
      const form = await readForm(c);
      const next = safeNext(form.next);
      const key = typeof form.key === 'string' ? form.key.trim() : '';
      if (!key.startsWith('ao_')) return signInForm(c, next, 'Enter a tenant API key: it starts with ao_.', 400);
      let principal: Principal;
      try {
        principal = await deps.authenticate(`Bearer ${key}`);
      } catch (err) {
        if (isAppError(err) && err.status === 401) return signInForm(c, next, `That key was not accepted (${err.message}).`, 401);
        throw err;
      }
      if (!hasRole(principal, 'member')) return signInForm(c, next, 'A viewer key cannot approve logins; use a key of role member or higher.', 403);
      sessions.start(c, principal);
      return c.redirect(next, 303);
    })
    .post('/sign-out', async (c) => {
      const form = await readForm(c);
      if (sessions.checkCsrf(c, form.csrf)) sessions.end(c);
      return c.redirect('/dashboard/sign-in', 303);
    });
}
