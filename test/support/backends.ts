import { inject } from 'vitest';
import { createTestDatabase } from './pg.ts';
import './global-setup.ts';

/**
 * The two storage backends every storage test runs on: the embedded cluster (`DATABASE_URL=memory`, a throwaway
 * cluster per instance) and a database of its own on the PostgreSQL server (or on the embedded cluster standing in
 * for the server, see global-setup.ts). `setup()` returns a DATABASE_URL and a cleanup.
 */
export interface Backend {
  name: string;
  setup(): Promise<{ url: string; adminUrl?: string; cleanup(): Promise<void> }>;
}

export const embedded: Backend = { name: 'embedded', setup: async () => ({ url: 'memory', cleanup: async () => {} }) };
export const server: Backend = {
  name: inject('pgServer') ? 'server' : 'server (embedded stand-in)',
  async setup() {
    const db = await createTestDatabase();
    return { url: db.url, adminUrl: db.adminUrl, cleanup: db.drop };
  },
};

export const backends: Backend[] = [embedded, server];

/**
 * Starts an instance on a backend's fresh database; its `stop()` also drops that database. Tests call it in
 * `beforeAll` and `stop()` in `afterAll`.
 */
export async function startOn<T extends { stop(): Promise<void> }>(backend: Backend, start: (databaseUrl: string) => Promise<T>): Promise<T> {
  const db = await backend.setup();
  try {
    const instance = await start(db.url);
    const stop = instance.stop.bind(instance);
    return Object.assign(instance, {
      async stop() {
        await stop();
        await db.cleanup();
      },
    });
  } catch (err) {
    await db.cleanup();
    throw err;
  }
}
