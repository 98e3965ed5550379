import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonb, migrate, openDatabase, withOperator, withTenant, type Database } from '../../../db/index.ts';
import { runEvent, type RunEvent } from '../../../contracts/run-event.ts';
import { createLogger } from '../../../shared/log.ts';
import { anyText } from '../../../../test/support/any-text.ts';
import { server } from '../../../../test/support/backends.ts';
import { connect } from '../../../../test/support/pg.ts';
import { createEventLog, type EventLog } from './event-log.ts';
import type { Hub } from './hub.ts';
import { appendEvents, eventsAfter } from './runs.repo.ts';

/**
 * The durable event log on a real PostgreSQL: events holding any text (NUL, lone surrogates, what random bytes decode
 * to) are stored and replayed as they were appended, and an event the database still refuses (here: a trigger the test
 * adds, raising a data exception for a marked event) fails its own run only, never the other runs, of any tenant,
 * that were written in the same group commit.
 */
describe('the run event log', () => {
  let database: Database;
  let admin: ReturnType<typeof connect>;
  let cleanup: () => Promise<void>;
  const log = createLogger('test');
  const hub = {} as Hub;
  let events: EventLog;

  beforeAll(async () => {
    const db = await server.setup();
    cleanup = db.cleanup;
    database = await openDatabase({ url: db.url, dataDir: '/nonexistent' });
    await migrate(database);
    admin = connect(db.adminUrl!, { max: 1 });
    await admin.unsafe(`
      CREATE FUNCTION refuse_marked() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.event->>'message' = 'UNSTORABLE' THEN
          RAISE EXCEPTION 'test: this event cannot be stored' USING ERRCODE = '22P05';
        END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER refuse_marked BEFORE INSERT ON run_events FOR EACH ROW EXECUTE FUNCTION refuse_marked();
    `);
    for (const tenant of ['acme', 'globex']) {
      await withOperator(database.db, (tx) => tx.insertInto('tenants').values({ id: tenant, name: tenant }).execute());
    }
    // a short retry: a log that retried data errors would give up on the whole batch within the test
    events = createEventLog({ db: database.db, hub, log, giveUpMs: 300 });
  }, 60_000);
  afterAll(async () => {
    await events?.close();
    await database?.close();
    await admin?.end({ timeout: 1 });
    await cleanup?.();
  });

  let runs = 0;
  async function newRun(tenant: string): Promise<string> {
    const id = `run-${++runs}`;
    await withTenant(database.db, tenant, (tx) =>
      tx.insertInto('runs').values({ id, tenant_id: tenant, session_id: `sess-${id}`, profile: 'p', sub_task: jsonb({}), status: 'running', owner_id: 'test' }).execute(),
    );
    return id;
  }
  const replay = (tenant: string, runId: string) => withTenant(database.db, tenant, (tx) => eventsAfter(tx, runId, 0));

  it('replays events holding any text exactly as they were appended, several runs sharing each write', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(anyText(200), fc.uint8Array({ maxLength: 200 })), { minLength: 1, maxLength: 6 }), async (items) => {
        const a = await newRun('acme');
        const b = await newRun('globex');
        const appended: Record<string, RunEvent[]> = { [a]: [], [b]: [] };
        // appended in one tick: one group commit carries both tenants' events
        await Promise.all(
          items.flatMap(([text, bytes], i) => {
            const decoded = new TextDecoder().decode(bytes); // what a command printing these bytes shows
            const first = runEvent('tool_output', { toolName: 'run_command', message: text, delta: true });
            const second = runEvent('tool_call', { toolName: text, input: { [text]: [text, decoded] } });
            appended[a].push(first);
            appended[b].push(second);
            return [events.append('acme', a, i + 1, first), events.append('globex', b, i + 1, second)];
          }),
        );
        expect((await replay('acme', a)).map((e) => e.event)).toEqual(appended[a]);
        expect((await replay('globex', b)).map((e) => e.event)).toEqual(appended[b]);
      }),
      { numRuns: 40 },
    );
  });

  it('fails only the run whose event the database refuses; the other runs in the same write, of both tenants, are stored', async () => {
    const [plain, refused, sameTenant, later] = [await newRun('acme'), await newRun('acme'), await newRun('acme'), await newRun('globex')];
    const settle = (p: Promise<void>) => p.then(() => 'stored', (err: Error) => err.message);
    const outcomes = await Promise.all([
      settle(events.append('acme', plain, 1, runEvent('progress', { message: 'first' }))),
      settle(events.append('acme', refused, 1, runEvent('progress', { message: 'before' }))),
      settle(events.append('acme', refused, 2, runEvent('progress', { message: 'UNSTORABLE' }))),
      settle(events.append('acme', sameTenant, 1, runEvent('progress', { message: 'also\u0000fine' }))),
      settle(events.append('globex', later, 1, runEvent('progress', { message: 'other tenant' }))),
      settle(events.append('acme', plain, 2, runEvent('progress', { message: 'second' }))),
    ]);
    expect(outcomes).toEqual(['stored', 'test: this event cannot be stored', 'test: this event cannot be stored', 'stored', 'stored', 'stored']);
    expect((await replay('acme', plain)).map((e) => e.event.message)).toEqual(['first', 'second']);
    expect((await replay('acme', sameTenant)).map((e) => e.event.message)).toEqual(['also\u0000fine']);
    expect((await replay('globex', later)).map((e) => e.event.message)).toEqual(['other tenant']);
    // nothing of the refused run was stored in that write, and nothing of it is written after the gap
    expect(await replay('acme', refused)).toEqual([]);
    await expect(events.append('acme', refused, 3, runEvent('progress', { message: 'after' }))).rejects.toThrow('an earlier event of this run could not be stored');
    // the next writes of the other runs go on as before
    await events.append('acme', plain, 3, runEvent('progress', { message: 'third' }));
    expect((await replay('acme', plain)).map((e) => e.event.message)).toEqual(['first', 'second', 'third']);
  });

  it('hands a run its events still queued, for its end to write, and settles once the ones being written are stored', async () => {
    const [ending, other] = [await newRun('acme'), await newRun('acme')];
    const first = events.append('acme', ending, 1, runEvent('progress', { message: 'first' }));
    await Promise.resolve(); // the write of the first event is under way
    const queued = [events.append('acme', ending, 2, runEvent('progress', { message: 'second' })), events.append('acme', ending, 3, runEvent('progress', { message: 'third' }))];
    const beside = events.append('acme', other, 1, runEvent('progress', { message: 'beside' }));
    const taken = events.takeQueued('acme', ending);
    expect(taken.events.map((e) => [e.seq, e.event.message])).toEqual([[2, 'second'], [3, 'third']]);
    await taken.before;
    await first;
    expect((await replay('acme', ending)).map((e) => e.event.message)).toEqual(['first']);
    // the caller writes them (the run's end does, with its terminal event) and settles them
    await withTenant(database.db, 'acme', (tx) => appendEvents(tx, 'acme', taken.events.map((e) => ({ runId: ending, seq: e.seq, event: e.event }))));
    for (const e of taken.events) e.resolve();
    await Promise.all([...queued, beside]);
    expect((await replay('acme', ending)).map((e) => e.event.message)).toEqual(['first', 'second', 'third']);
    expect((await replay('acme', other)).map((e) => e.event.message)).toEqual(['beside']);
  });
});
