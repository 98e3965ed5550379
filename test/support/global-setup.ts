import type { TestProject } from 'vitest/node';
import { startCluster, ensureTemplate, clusterUser, SUPERUSER, type EmbeddedCluster } from '../../src/db/embedded/index.ts';
import { createLogger } from '../../src/shared/log.ts';
import { answers, DEFAULT_ADMIN_URL } from './pg.ts';
import { ensureBaseImage } from './containers.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Superuser URL of the server half: the PostgreSQL server, or an embedded cluster standing in for it. */
    pgAdminUrl: string;
    /** True when that server is the real one at DEFAULT_ADMIN_URL. */
    pgServer: boolean;
  }
}

/**
 * The storage tests run on the embedded cluster and on a PostgreSQL server. When no server answers (a laptop
 * without one, CI included), an embedded cluster stands in for the server, so the whole suite still runs, on
 * embedded clusters only. The template of embedded clusters is made here once, before test files start in parallel, and
 * so is the container tests' base image (test/support/containers.ts).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  await ensureTemplate(clusterUser(process.env.SVC_PG_OS_USER || 'nobody'));
  // the container tests' base image, once per machine (it stays in the engine's image store)
  await ensureBaseImage();
  let standIn: EmbeddedCluster | undefined;
  let adminUrl = DEFAULT_ADMIN_URL;
  const server = await answers(DEFAULT_ADMIN_URL);
  if (!server) {
    // Many test files create databases and pools on it at once: more connections than a laptop cluster allows.
    standIn = await startCluster({ dataDir: undefined, osUser: process.env.SVC_PG_OS_USER || 'nobody', settings: ['max_connections=400'], log: createLogger('tests') });
    adminUrl = standIn.url(SUPERUSER, 'postgres');
    process.stderr.write(`\n[svc tests] PostgreSQL at ${DEFAULT_ADMIN_URL} does not answer: an embedded cluster stands in for the server\n\n`);
  }
  project.provide('pgAdminUrl', adminUrl);
  project.provide('pgServer', server);
  return async () => {
    await standIn?.stop();
  };
}
