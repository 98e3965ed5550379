import type { TestProject } from 'vitest/node';
import { pgAvailable, ADMIN_URL } from './pg.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    pg: boolean;
  }
}

/**
 * The storage tests run on embedded PGlite and on the real PostgreSQL server. Locally the server half may skip when
 * no server answers; in CI (CI=true) a missing server fails the run instead of skipping silently.
 */
export default async function setup(project: TestProject): Promise<void> {
  const ok = await pgAvailable();
  if (!ok && process.env.CI) throw new Error(`PostgreSQL at ${ADMIN_URL} does not answer; CI requires the real-server half of the suite`);
  if (!ok) process.stderr.write(`\n[svc tests] PostgreSQL at ${ADMIN_URL} does not answer: the real-server half is skipped\n\n`);
  project.provide('pg', ok);
}
