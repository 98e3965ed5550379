import { defineCommand } from 'citty';
import { globalArgs } from './args.ts';
import { ApiError } from './client/http.ts';
import { maskKey } from './client/mask.ts';
import { openSession } from './client/session.ts';

interface Who {
  tenantId: string | null;
  tenantName: string | null;
  role: string | null;
  authKind: string | null;
  keyId: string | null;
}

/** `svc whoami`: GET /api/whoami; a server without it (404) is asked GET /api/profiles instead. */
export default defineCommand({
  meta: { name: 'whoami', description: 'Show the organization, role and key the CLI acts as' },
  args: { ...globalArgs },
  async run({ args }) {
    const { out, ctx, api } = openSession(args, { needKey: true });
    let who: Who;
    let serverSupportsWhoami = true;
    try {
      const w = await api.get<Partial<Who>>('/api/whoami');
      who = { tenantId: w.tenantId ?? null, tenantName: w.tenantName ?? null, role: w.role ?? null, authKind: w.authKind ?? null, keyId: w.keyId ?? null };
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 404)) throw err;
      await api.get('/api/profiles?limit=1');
      who = { tenantId: null, tenantName: null, role: null, authKind: null, keyId: null };
      serverSupportsWhoami = false;
    }
    const result = { context: ctx.name, apiUrl: ctx.apiUrl, apiKey: maskKey(ctx.apiKey), ...who, serverSupportsWhoami };
    if (out.json) return out.data(result);
    out.fields(Object.entries(result).map(([k, v]) => [k, typeof v === 'boolean' ? (v ? 'yes' : 'no') : v]));
  },
});
