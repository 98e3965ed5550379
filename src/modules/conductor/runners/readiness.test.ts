import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../../db/index.ts';
import { createLogger } from '../../../shared/log.ts';
import { server } from '../../../../test/support/backends.ts';
import { createFleet } from './fleet.ts';
import { conductorReadiness } from './readiness.ts';

/** The conductor's readiness names a database that does not answer and a fleet with no runner at all. */
describe('conductor readiness', () => {
  let database: Database;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    const db = await server.setup();
    cleanup = db.cleanup;
    database = await openDatabase({ url: db.url, dataDir: '/nonexistent' });
  });
  afterAll(async () => cleanup?.());

  it('is not ready when the database is gone or no runner is configured, and says which', async () => {
    const fleet = createFleet({ urls: [], log: createLogger('test') });
    const readiness = conductorReadiness({ db: database.db, fleet });
    expect(await readiness()).toEqual({
      ready: false,
      checks: [{ name: 'database', ok: true, ms: expect.any(Number) }],
      problems: ['runner fleet: no runners configured (SVC_RUNNERS)'],
    });
    await database.close();
    const report = await readiness();
    expect(report.ready).toBe(false);
    expect(report.checks[0]).toMatchObject({ name: 'database', ok: false, error: expect.any(String) });
    expect(report.problems[0]).toMatch(/^database: .+/);
  });
});
