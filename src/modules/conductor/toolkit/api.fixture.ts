import { Hono } from 'hono';
import { migrate, openDatabase, withOperator, type Database } from '../../../db/index.ts';
import { useJsonErrors } from '../../../shared/http.ts';
import type { IdentityEnv, Principal } from '../identity/index.ts';
import { insertTenant } from '../identity/tenants.repo.ts';

/**
 * Test fixture for conductor route factories before they are mounted in the conductor: a migrated database on a
 * throwaway embedded cluster, with tenants `acme` and `globex`, and a request helper acting as a chosen principal.
 */
export interface TestApi {
  database: Database;
  request(method: string, path: string, o?: { as?: Partial<Principal>; json?: unknown }): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

export async function testApi(mount: (app: Hono<IdentityEnv>, database: Database) => void): Promise<TestApi> {
  const database = await openDatabase({ url: 'memory', dataDir: '/nonexistent' });
  await migrate(database);
  await withOperator(database.db, async (tx) => {
    for (const t of [{ id: 'acme', name: 'Acme' }, { id: 'globex', name: 'Globex' }]) await insertTenant(tx, t);
  });
  const app = new Hono<IdentityEnv>();
  useJsonErrors(app);
  let principal: Principal;
  app.use('*', async (c, next) => {
    c.set('principal', principal);
    await next();
  });
  mount(app, database);
  return {
    database,
    async request(method, path, o = {}) {
      principal = { tenantId: 'acme', tenantName: null, role: 'owner', authKind: 'api_key', keyId: null, subject: null, ...o.as };
      const init: RequestInit = { method };
      if (o.json !== undefined) Object.assign(init, { headers: { 'content-type': 'application/json' }, body: JSON.stringify(o.json) });
      const res = await app.request(path, init);
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : undefined };
    },
    close: () => database.close(),
  };
}
