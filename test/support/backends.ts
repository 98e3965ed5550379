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
