import { Hono } from 'hono';
import { isAppError } from '../../../shared/errors.ts';
import { readForm } from '../../../shared/http.ts';
import { decideUserCode, lookupUserCode, normalizeUserCode, type DeviceDeps } from '../device/index.ts';
import { escape, hidden, page } from './html.ts';
import type { SessionCodec } from './session.ts';
import { signInUrl } from './sign-in.routes.ts';

const ENTER_CODE = (error = '') => `<h1>Approve a device</h1>${error ? `<p class="error" role="alert">${escape(error)}</p>` : ''}
<form method="get" action="/device"><label for="code">Code shown by <code>svc auth login</code></label>
<input id="code" name="code" type="text" autocomplete="off" placeholder="BCDF-GHJK" required autofocus><button type="submit">Continue</button></form>`;

/** `/device`: enter (or follow a link with) a device-login user code, then approve or deny it. */
export function devicePageRoutes(deps: { sessions: SessionCodec; device: DeviceDeps }): Hono {
  const { sessions } = deps;
  return new Hono()
    .get('/', async (c) => {
      const p = await sessions.open(c);
      if (!p) return c.redirect(signInUrl(c), 303);
      const raw = c.req.query('code');
      if (!raw) return page(c, 'Approve a device', ENTER_CODE());
      const code = normalizeUserCode(raw);
      const row = code ? await lookupUserCode(deps.device, code) : undefined;
      if (!code || !row) return page(c, 'Approve a device', ENTER_CODE('Unknown code. Check it and try again.'), { status: 404 });
      if (row.status !== 'pending') return page(c, 'Approve a device', ENTER_CODE('This code was already used.'), { status: 409 });
      if (row.expiresAt.getTime() <= Date.now()) return page(c, 'Approve a device', ENTER_CODE('This code expired. Run the login again.'), { status: 410 });
      const body = `<h1>Approve svc CLI login</h1>
<p>A command-line client on another device asks for a new API key.</p>
<dl><dt>Code</dt><dd>${escape(code)}</dd><dt>Organization</dt><dd>${escape(p.tenantId)}</dd><dt>Role</dt><dd>${escape(p.role)}</dd><dt>Key label</dt><dd>${escape(row.label)}</dd></dl>
<p class="muted">Approve only if this code is the one your terminal shows.</p>
<form method="post" action="/device">${hidden({ code, csrf: sessions.csrf(c) })}
<button type="submit" name="decision" value="approve">Approve</button><button class="secondary" type="submit" name="decision" value="deny">Deny</button></form>`;
      return page(c, 'Approve svc CLI login', body);
    })
    .post('/', async (c) => {
      const p = await sessions.open(c);
      if (!p) return c.redirect(signInUrl(c), 303);
      const form = await readForm(c);
      if (!sessions.checkCsrf(c, form.csrf)) return page(c, 'Expired form', '<h1>This form expired</h1><p>Go back and reload the page.</p>', { status: 403 });
      const code = normalizeUserCode(String(form.code ?? ''));
      if (!code) return page(c, 'Approve a device', ENTER_CODE('Unknown code.'), { status: 400 });
      const approve = form.decision === 'approve';
      try {
        await decideUserCode(deps.device, code, p, approve);
      } catch (err) {
        if (isAppError(err) && err.status < 500) return page(c, 'Approve a device', ENTER_CODE(err.message), { status: err.status });
        throw err;
      }
      const body = approve
        ? '<h1>Login approved</h1><p>Return to your terminal: the CLI picks up its key within a few seconds.</p>'
        : '<h1>Login denied</h1><p>The CLI will report that the login was denied.</p>';
      return page(c, approve ? 'Login approved' : 'Login denied', body);
    });
}
