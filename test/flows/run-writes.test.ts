import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.ts';
import { freePort } from '../support/listen.ts';
import { connect, createTestDatabase } from '../support/pg.ts';
import { startTestSvc, type TestSvc } from '../support/svc.ts';
import { followSse, isTerminalEvent, readSse } from '../support/sse.ts';

/**
 * Writes of the run path that fail for a while (the database refuses them, through a trigger the test switches on and
 * off as a superuser): a run's end that cannot be stored is not shown to clients and is retried until it lands; an
 * event-log batch that cannot be stored is retried, never dropped, so the log has no gap; a log that stays unwritable
 * past SVC_RUN_WRITE_RETRY_MS ends the run with one error right after its last stored event; a result the database
 * refuses for its data ends the run with an error in its place, as does one of its last events (right after the last
 * event stored); and a finish that comes late never overwrites the status another replica wrote meanwhile.
 */
const KEY = 'ao_test_runwritesrunwritesrunwr01';
const WAIT = { timeout: 20_000, interval: 50 };

let svc: TestSvc;
let fake: FakeProvider;
let admin: ReturnType<typeof connect>;
let dropDatabase: () => Promise<void>;

const api: TestSvc['api'] = (path, init) => svc.api(path, init);

beforeAll(async () => {
  fake = await startFakeProvider();
  const db = await createTestDatabase();
  dropDatabase = db.drop;
  const port = await freePort();
  svc = await startTestSvc({ DATABASE_URL: db.url, SVC_BOOTSTRAP_TOKEN: KEY, SVC_RUN_WRITE_RETRY_MS: '600', SVC_CONDUCTOR_URL: `http://127.0.0.1:${port}`, OPENAI_COMPATIBLE_BASE_URL: fake.url, OPENAI_COMPATIBLE_API_KEY: 'x' }, 'all', { port });
  admin = connect(db.adminUrl, { max: 1 });
  // The switch: while a row names a table, writes to it fail. The sequence counts refusals outside the rolled-back
  // transaction, so the test can wait until the server has been refused (and has retried) without sleeping.
  await admin.unsafe(`
    CREATE TABLE fail_writes (tbl text PRIMARY KEY);
    CREATE SEQUENCE fail_hits;
    CREATE FUNCTION refuse_write() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER AS $$
    BEGIN
      IF EXISTS (SELECT 1 FROM fail_writes WHERE tbl = TG_TABLE_NAME) THEN
        PERFORM nextval('fail_hits');
        RAISE EXCEPTION 'test: writes to % are refused', TG_TABLE_NAME;
      END IF;
      -- 'run_events:not-errors': the log takes terminal errors only (a log that fails for all but the last write).
      IF TG_TABLE_NAME = 'run_events' AND EXISTS (SELECT 1 FROM fail_writes WHERE tbl = 'run_events:not-errors') THEN
        IF NEW.event->>'type' <> 'error' THEN
          RAISE EXCEPTION 'test: run events are refused';
        END IF;
      END IF;
      -- 'run_events:results-as-data': a result event is refused for what it holds (a data exception: no retry helps)
      IF TG_TABLE_NAME = 'run_events' AND EXISTS (SELECT 1 FROM fail_writes WHERE tbl = 'run_events:results-as-data') THEN
        IF NEW.event->>'type' = 'result' THEN
          RAISE EXCEPTION 'test: this result cannot be stored' USING ERRCODE = '22P05';
        END IF;
      END IF;
      -- 'run_events:usage-as-data': a usage event (one of a run's last) is refused for what it holds
      IF TG_TABLE_NAME = 'run_events' AND EXISTS (SELECT 1 FROM fail_writes WHERE tbl = 'run_events:usage-as-data') THEN
        IF NEW.event->>'type' = 'usage' THEN
          RAISE EXCEPTION 'test: this usage cannot be stored' USING ERRCODE = '22P05';
        END IF;
      END IF;
      RETURN NEW;
    END $$;
    CREATE TRIGGER refuse_runs BEFORE UPDATE ON runs FOR EACH ROW EXECUTE FUNCTION refuse_write();
    CREATE TRIGGER refuse_events BEFORE INSERT ON run_events FOR EACH ROW EXECUTE FUNCTION refuse_write();
  `);
  expect((await api('/api/profiles', { method: 'POST', json: { name: 'plain', runtime: 'general', model: 'openai-compatible:fake-model' } })).status).toBe(201);
}, 60_000);
afterAll(async () => {
  await admin?.unsafe('DELETE FROM fail_writes').catch(() => {});
  await svc?.stop();
  await admin?.end({ timeout: 1 });
  await fake?.close();
  await dropDatabase?.();
});

const refusals = async () => Number((await admin.unsafe(`SELECT last_value, is_called FROM fail_hits`).then((r) => (r[0].is_called ? r[0].last_value : 0))) as number);
const statusOf = async (runId: string) => ((await (await api(`/api/runs/${runId}`)).json()) as { status: string }).status;

async function startRun(prompt: string): Promise<string> {
  const res = await api('/api/runs', { method: 'POST', json: { profile: 'plain', prompt } });
  expect(res.status).toBe(202);
  return ((await res.json()) as { runId: string }).runId;
}

describe('run writes that fail for a while', () => {
  it('a run end that cannot be stored is not shown, is retried, and lands with the status a client then reads', async () => {
    const before = await refusals();
    await admin.unsafe(`INSERT INTO fail_writes VALUES ('runs')`);
    const runId = await startRun('DELTAS 3');
    const live = followSse((signal) => api(`/api/runs/${runId}/stream`, { signal }));
    await expect.poll(refusals, WAIT).toBeGreaterThanOrEqual(before + 2); // refused, and tried again
    expect(live.frames.filter((f) => isTerminalEvent(f.event))).toEqual([]);
    expect(await statusOf(runId)).toBe('running');
    await admin.unsafe(`DELETE FROM fail_writes`);
    const frames = await live.ended;
    expect(frames.filter((f) => isTerminalEvent(f.event)).map((f) => f.event.type)).toEqual(['result']);
    expect(await statusOf(runId)).toBe('ok');
    // The stored stream is the one the client saw.
    const stored = await readSse(await api(`/api/runs/${runId}/stream`));
    expect(stored.map((f) => f.id)).toEqual(frames.map((f) => f.id));
  });

  it('an event batch that cannot be stored is retried: the log has every event, in order, and one terminal', async () => {
    const before = await refusals();
    await admin.unsafe(`INSERT INTO fail_writes VALUES ('run_events')`);
    const runId = await startRun('DELTAS 5');
    await expect.poll(refusals, WAIT).toBeGreaterThanOrEqual(before + 2);
    await admin.unsafe(`DELETE FROM fail_writes`);
    await expect.poll(() => statusOf(runId), WAIT).toBe('ok');
    const stored = await readSse(await api(`/api/runs/${runId}/stream`));
    expect(stored.map((f) => f.id)).toEqual(stored.map((_, i) => i + 1));
    expect(stored.filter((f) => f.event.type === 'assistant').length).toBeGreaterThan(0);
    expect(stored.filter((f) => isTerminalEvent(f.event)).map((f) => f.event.type)).toEqual(['result']);
    expect(isTerminalEvent(stored.at(-1)!.event)).toBe(true);
  });

  it('a log that stays unwritable ends the run with one error, stored right after the last stored event', async () => {
    await admin.unsafe(`INSERT INTO fail_writes VALUES ('run_events:not-errors')`);
    try {
      const runId = await startRun('SLOW_DELTAS 50 20');
      const live = followSse((signal) => api(`/api/runs/${runId}/stream`, { signal }));
      const frames = await live.ended;
      expect(frames.map((f) => ({ id: f.id, type: f.event.type }))).toEqual([{ id: 1, type: 'error' }]);
      expect(frames[0].event.message).toMatch(/could not be stored/);
      expect(await statusOf(runId)).toBe('error');
      expect(await readSse(await api(`/api/runs/${runId}/stream`))).toEqual(frames);
    } finally {
      await admin.unsafe(`DELETE FROM fail_writes`);
    }
  }, 30_000);

  it('a last event the database refuses for what it holds ends the run with one error right after the last stored event', async () => {
    await admin.unsafe(`INSERT INTO fail_writes VALUES ('run_events:usage-as-data')`);
    try {
      const runId = await startRun('DELTAS 3');
      const frames = await followSse((signal) => api(`/api/runs/${runId}/stream`, { signal })).ended;
      // whether the log was writing it or the run's end took it, the stream has no gap and one terminal error
      expect(frames.map((f) => f.id)).toEqual(frames.map((_, i) => i + 1));
      expect(frames.filter((f) => f.event.type === 'usage')).toEqual([]);
      expect(frames.filter((f) => isTerminalEvent(f.event)).map((f) => f.event)).toEqual([
        expect.objectContaining({ type: 'error', message: 'run failed: its events could not be stored: test: this usage cannot be stored' }),
      ]);
      expect(isTerminalEvent(frames.at(-1)!.event)).toBe(true);
      expect(await statusOf(runId)).toBe('error');
      expect(await readSse(await api(`/api/runs/${runId}/stream`))).toEqual(frames);
    } finally {
      await admin.unsafe(`DELETE FROM fail_writes`);
    }
  });

  it('a result the database refuses for what it holds ends the run at once with one error saying so, stored and replayed', async () => {
    await admin.unsafe(`INSERT INTO fail_writes VALUES ('run_events:results-as-data')`);
    try {
      const runId = await startRun('DELTAS 3');
      const frames = await followSse((signal) => api(`/api/runs/${runId}/stream`, { signal })).ended;
      expect(frames.filter((f) => isTerminalEvent(f.event)).map((f) => f.event)).toEqual([
        expect.objectContaining({ type: 'error', message: 'run failed: its final event could not be stored: test: this result cannot be stored' }),
      ]);
      expect(frames.filter((f) => f.event.type === 'assistant').length).toBeGreaterThan(0);
      expect(await statusOf(runId)).toBe('error');
      expect(await readSse(await api(`/api/runs/${runId}/stream`))).toEqual(frames);
    } finally {
      await admin.unsafe(`DELETE FROM fail_writes`);
    }
  });

  it('a late finish does not overwrite a status another replica wrote meanwhile', async () => {
    const runId = await startRun('HOLD latefinish then answer');
    await fake.when(() => fake.requests.find((r) => JSON.stringify(r.body ?? '').includes('HOLD latefinish')));
    // What another replica's orphan sweep does to a run whose owner looked dead: it ends it first.
    await admin.unsafe(`UPDATE runs SET status = 'interrupted', finished_at = now() WHERE id = $1`, [runId]);
    fake.release('latefinish');
    const frames = await readSse(await api(`/api/runs/${runId}/stream`));
    expect(frames.filter((f) => isTerminalEvent(f.event))).toHaveLength(1);
    expect(await statusOf(runId)).toBe('interrupted');
  });
});
