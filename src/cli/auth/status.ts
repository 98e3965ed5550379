import { defineCommand } from 'citty';
import { globalArgs } from '../args.ts';
import { marked } from '../client/context.ts';
import { authError } from '../client/exit.ts';
import { ApiError } from '../client/http.ts';
import { maskKey } from '../client/mask.ts';
import { openSession } from '../client/session.ts';

/** `svc auth status`: the active context, its key verified with GET /api/profiles; exit 3 without a URL or key. */
export default defineCommand({
  meta: { name: 'status', description: 'Show the active context and verify its key' },
  args: { ...globalArgs },
  async run({ args }) {
    const { out, ctx, api } = openSession(args, { needKey: true });
    try {
      await api.request('GET', '/api/profiles?limit=1', { timeoutMs: 15_000 });
    } catch (err) {
      if (err instanceof ApiError && (err.status === 401 || err.status === 403)) throw authError(`the key of context "${ctx.name}" was rejected: ${err.message}`, 'run `svc auth login`');
      throw err;
    }
    const status = { context: ctx.name, apiUrl: ctx.apiUrl, gatewayUrl: ctx.gatewayUrl ?? null, dashboardUrl: ctx.dashboardUrl, apiKey: maskKey(ctx.apiKey), defaults: ctx.defaults, valid: true };
    if (out.json) return out.data(status);
    out.fields([
      ['context', ctx.name],
      ['apiUrl', marked(ctx, 'apiUrl')],
      ['gatewayUrl', ctx.gatewayUrl],
      ['dashboardUrl', marked(ctx, 'dashboardUrl')],
      ['apiKey', status.apiKey],
      ['valid', 'yes'],
    ]);
  },
});
