import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../../db/index.ts';
import { runEvent } from '../../../contracts/run-event.ts';
import { createLogger } from '../../../shared/log.ts';
import { server } from '../../../../test/support/backends.ts';
import { createHub, type Hub, type StoredEvent } from './hub.ts';

/**
 * The hub as a replica that follows runs driven elsewhere: every announced batch is read from the log and delivered,
 * and once the streams are finished the hub keeps nothing per run (a long-lived conductor would otherwise grow an
 * entry for every run it ever followed).
 */
describe('run event hub', () => {
  let database: Database;
  let cleanup: () => Promise<void>;
  let hub: Hub;
  /** The log the remote replica wrote: two events per run, the second terminal. */
  const log = (runId: string): StoredEvent[] => [
    { seq: 1, event: runEvent('assistant', { message: `hello from ${runId}` }) },
    { seq: 2, event: runEvent('result', { message: 'done' }) },
  ];

  beforeAll(async () => {
    const db = await server.setup();
    cleanup = db.cleanup;
    database = await openDatabase({ url: db.url, dataDir: '/nonexistent' });
    hub = createHub({ database, log: createLogger('test'), fetchAfter: async (_tenant, runId, after) => log(runId).filter((e) => e.seq > after) });
    await hub.start();
  });
  afterAll(async () => {
    await hub?.stop();
    await database?.close();
    await cleanup?.();
  });

  it('delivers the events of runs announced by another replica, and holds nothing per run once their streams end', async () => {
    const runs = Array.from({ length: 40 }, (_, i) => `run_${i}`);
    const seen = new Map<string, string[]>();
    const finished = runs.map(
      (runId) =>
        new Promise<void>((resolve) => {
          const sub = hub.subscribe('default', runId, 0, (e) => {
            seen.set(runId, [...(seen.get(runId) ?? []), e.event.type]);
            if (e.event.type === 'result') {
              sub.unsubscribe();
              resolve();
            }
          });
        }),
    );
    // what the run_events insert trigger sends at commit (sql/0022_run_events_notify.sql): one NOTIFY per run
    await Promise.all(runs.map((runId) => database.notify('svc_run_events', JSON.stringify({ t: 'default', r: runId, s: 2 }))));
    await Promise.all(finished);
    expect([...seen.values()]).toEqual(runs.map(() => ['assistant', 'result']));

    const deadline = Date.now() + 10_000;
    while (hub.catchUps() > 0 && Date.now() < deadline) await new Promise((r) => setImmediate(r));
    expect(hub.catchUps()).toBe(0);
  });

  it('gives a subscriber behind a locally published event the gap from the log first, in order (an adopted run)', async () => {
    const got: number[] = [];
    const done = new Promise<void>((resolve) => {
      const sub = hub.subscribe('default', 'adopted', 0, (e) => {
        got.push(e.seq);
        if (e.event.type === 'result') {
          sub.unsubscribe();
          resolve();
        }
      });
    });
    // this replica drives the run from event 2 on: event 1 reached the log under the driver that died, unannounced
    hub.publish('default', 'adopted', { seq: 2, event: runEvent('result', { message: 'done' }) });
    await done;
    expect(got).toEqual([1, 2]);
  });
});
