import { defineCommand } from 'citty';
import { globalArgs } from '../args.ts';
import { marked } from '../client/context.ts';
import { usageError } from '../client/exit.ts';
import { maskKey } from '../client/mask.ts';
import { openSession } from '../client/session.ts';

/** `svc context show`: the effective context after environment overrides; no request. */
export default defineCommand({
  meta: { name: 'show', description: 'Show the effective context (after environment overrides)' },
  args: { ...globalArgs },
  async run({ args }) {
    const { out, ctx } = openSession(args);
    if (!ctx.configured) throw usageError(`not configured: context "${ctx.name}" does not exist and no SVC_API_URL or SVC_API_KEY is set`, 'run `svc auth login --with-token <key>` (a server elsewhere than http://127.0.0.1:8080: add `--api-url <its URL>`)');
    const shown = { name: ctx.name, apiUrl: ctx.apiUrl, gatewayUrl: ctx.gatewayUrl ?? null, dashboardUrl: ctx.dashboardUrl, apiKey: maskKey(ctx.apiKey), defaults: ctx.defaults };
    if (out.json) return out.data(shown);
    out.fields([
      ['name', ctx.name],
      ['apiUrl', marked(ctx, 'apiUrl')],
      ['gatewayUrl', ctx.gatewayUrl],
      ['dashboardUrl', marked(ctx, 'dashboardUrl')],
      ['apiKey', shown.apiKey],
    ]);
  },
});
