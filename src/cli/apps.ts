import { defineCommand } from 'citty';
import { globalArgs } from './args.ts';
import { ApiError } from './client/http.ts';
import { openSession } from './client/session.ts';

interface Provider {
  name: string;
  configured: boolean;
}
interface Connection {
  id: string;
  provider: string;
  appSlug: string;
  scope: string;
  status: string;
  mcpServerName: string | null;
  createdAt: string;
}

/** `svc apps`: connected-app providers and connections; a 503 from either route degrades to an empty list. */
export default defineCommand({
  meta: { name: 'apps', description: 'List connected-app providers and connections' },
  args: { ...globalArgs },
  async run({ args }) {
    const { out, api } = openSession(args, { needKey: true });
    const orEmpty = async <T>(path: string, field: string): Promise<T[]> => {
      try {
        return ((await api.get<Record<string, T[]>>(path))[field] ?? []) as T[];
      } catch (err) {
        if (err instanceof ApiError && err.status === 503) {
          out.log.warn(`${path} is unavailable (503): showing none`);
          return [];
        }
        throw err;
      }
    };
    const [providersRaw, connectionsRaw] = await Promise.all([orEmpty<Provider>('/api/connected-apps/providers', 'providers'), orEmpty<Connection>('/api/connected-apps/connections', 'connections')]);
    const providers = providersRaw.map((p) => ({ name: p.name, configured: p.configured }));
    const connections = connectionsRaw.map((c) => ({ id: c.id, provider: c.provider, appSlug: c.appSlug, scope: c.scope, status: c.status, mcpServerName: c.mcpServerName, createdAt: c.createdAt }));
    if (out.json) return out.data({ providers, connections });
    out.rows([
      ...providers.map((p) => ['provider', p.name, p.configured ? 'configured' : 'not-configured']),
      ...connections.map((c) => ['connection', c.id, c.provider, c.appSlug, c.scope || null, c.status, c.mcpServerName, c.createdAt]),
    ]);
  },
});
