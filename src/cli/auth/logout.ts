import { defineCommand } from 'citty';
import { globalArgs, yesArg } from '../args.ts';
import { saveConfigFile } from '../client/config-file.ts';
import { ApiError } from '../client/http.ts';
import { confirm } from '../client/prompt.ts';
import { openSession } from '../client/session.ts';

/**
 * `svc auth logout [--revoke] [--yes]`: removes the stored key and key id of the selected context. With --revoke it
 * first revokes the key on the server (DELETE /api/api-keys/<keyId>), best effort: a failure or a missing key id warns
 * and the key is still cleared locally. In a terminal the revoke is confirmed unless --yes. Always prints text.
 */
export default defineCommand({
  meta: { name: 'logout', description: 'Remove the stored key of the context (optionally revoke it)' },
  args: {
    ...globalArgs,
    ...yesArg,
    revoke: { type: 'boolean', description: 'revoke the key on the server first' },
  },
  async run({ args }) {
    const { env, out, file, ctx, api } = openSession(args);
    const stored = file.config.contexts[ctx.name];
    if (env.apiKey) out.log.warn('SVC_API_KEY is set in the environment: it still applies after logout');
    if (!stored?.apiKey) {
      out.text(`No stored key in context "${ctx.name}": nothing to do.`);
      return;
    }
    if (args.revoke) {
      const proceed = args.yes || !(env.stdinTTY && env.stdoutTTY) || (await confirm(`Revoke key ${stored.keyId ?? ''} on ${ctx.apiUrl}?`, true));
      if (!proceed) out.log.info('not revoking; clearing the key locally only');
      else if (!stored.keyId) out.log.warn('the key has no key id (pasted or --with-token): it cannot be revoked from here; clearing it locally');
      else {
        try {
          await api.request('DELETE', `/api/api-keys/${encodeURIComponent(stored.keyId)}`, { key: stored.apiKey, timeoutMs: 10_000 });
          out.text(`Revoked key ${stored.keyId}.`);
        } catch (err) {
          out.log.warn(`could not revoke key ${stored.keyId}: ${err instanceof ApiError ? `${err.status} ${err.message}` : err instanceof Error ? err.message : String(err)}; clearing it locally`);
        }
      }
    }
    delete stored.apiKey;
    delete stored.keyId;
    saveConfigFile(env.configDir, file.config);
    out.text(`Logged out of context "${ctx.name}": the key was removed from ${file.path}.`);
  },
});
