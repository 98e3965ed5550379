import { inject } from 'vitest';
import { createTestDatabase } from './pg.ts';
import './global-setup.ts';

/**
 * The two storage backends every storage test runs on. `setup()` returns a DATABASE_URL and a cleanup; the
 * real-server backend is present only when the server answered (see global-setup.ts).
 */
export interface Backend {
  name: 'pglite' | 'postgres';
  setup(): Promise<{ url: string; adminUrl?: string; cleanup(): Promise<void> }>;
}

export const pglite: Backend = { name: 'pglite', setup: async () => ({ url: 'memory', cleanup: async () => {} }) };
export const postgresServer: Backend = {
  name: 'postgres',
  async setup() {
    const db = await createTestDatabase();
    return { url: db.url, adminUrl: db.adminUrl, cleanup: db.drop };
  },
};

export const hasPostgres = inject('pg');
export const backends: Backend[] = hasPostgres ? [pglite, postgresServer] : [pglite];

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
