import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startAgentsHarness, type AgentsHarness } from '../support/agents.ts';
import { MODEL, startCluster, type Cluster } from '../support/cluster.ts';
import { connect } from '../support/pg.ts';
import { readUntil, sseFrames, type RunEventLike } from '../support/sse.ts';

/**
 * Parked approvals (issue 40, item 5): a `general` run whose tool call waits for a person leaves its runner's session
 * free (the worker's turn ended, its conversation saved) instead of holding the call, and the decision resumes it
 * from that call: the tool runs with the edited input, or the model reads the denial; the stream goes on under the
 * same run id and ends with exactly one terminal event. Durable: a decision taken after the conductor was killed and
 * restarted still resumes the run (split roles, real processes).
 */
const write = (content: string) => `CALL_TOOL fs_write {"path":"/work/note.txt","content":"${content}"}`;

/** A run's stream read up to (and including) the first event of `type`; `rest()` reads it to its end. */
const until = (stream: Response, type: string) => readUntil(stream, type);

const terminals = (events: RunEventLike[]) => events.filter((e) => e.type === 'result' || e.type === 'error');

describe('parked approvals (role all)', () => {
  let h: AgentsHarness;
  const api = (path: string, init?: Parameters<AgentsHarness['svc']['api']>[1]) => h.svc.api(path, init);
  const start = async (profile: string, prompt: string, sessionId?: string) => {
    const res = await api('/api/runs', { method: 'POST', json: { profile, prompt, ...(sessionId ? { sessionId } : {}) } });
    expect(res.status).toBe(202);
    return (await res.json()) as { runId: string; sessionId: string };
  };
  /**
   * The runner's sessions with a run in flight (its /metrics, which role all serves beside the conductor's): none once
   * the parked run left its worker (the tests run one at a time).
   */
  const runnerBusy = async () => {
    const line = (await (await fetch(`${h.svc.url}/metrics`)).text()).split('\n').find((l) => l.startsWith('svc_runner_sessions{status="running"} '));
    return Number(line?.split(' ')[1]);
  };
  const released = () => vi.waitFor(async () => expect(await runnerBusy()).toBe(0), { timeout: 15_000, interval: 100 });
  /** The last model request that carried a tool result: what the model read back. */
  const lastToolResultSeen = () => JSON.stringify(h.fake.requests.filter((r) => JSON.stringify(r.body ?? {}).includes('"role":"tool"')).at(-1)?.body ?? {});

  beforeAll(async () => {
    h = await startAgentsHarness();
    const profile = (body: Record<string, unknown>) => api('/api/profiles', { method: 'POST', json: { runtime: 'general', model: 'openai-compatible:fake-model', tools: ['@files'], ...body } });
    expect((await profile({ name: 'asker', permissions: { fs_write: 'ask', '*': 'allow' } })).status).toBe(201);
    expect((await profile({ name: 'hasty', permissions: { fs_write: 'ask' }, approvalTimeoutSeconds: 1 })).status).toBe(201);
  }, 60_000);
  afterAll(async () => {
    await h?.stop();
  });

  it('parks an ask call (the runner session is free, the approval waits its full timeout) and resumes it from the pending call once approved with an edited input', async () => {
    const { runId, sessionId } = await start('asker', write('original'));
    const { event, rest } = await until(await api(`/api/runs/${runId}/stream`), 'approval_required');
    const approvalId = event.approvalId as string;
    // parked, not held: SVC_APPROVAL_TIMEOUT_S (24 h by default) is the wait, not the 55 minutes of a held call
    expect(Date.parse(String(event.expiresAt)) - Date.now()).toBeGreaterThan(23 * 3600_000);
    // the worker's turn ended and the runner's session let go of the run, which still waits
    await released();
    expect((await (await api(`/api/runs/${runId}`)).json()).status).toBe('waiting');
    const modelCalls = h.fake.requests.length;

    const res = await api(`/api/runs/${runId}/approvals/${approvalId}`, { method: 'POST', json: { decision: 'approve', input: { path: '/work/note.txt', content: 'edited' } } });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: 'approved', delivered: true });

    const events = await rest();
    expect(events.find((e) => e.type === 'approval_decided')).toMatchObject({ approvalId, decision: 'approve', input: { content: 'edited' } });
    // the placeholder answer of the parked call never shows; the real result does, once
    const results = events.filter((e) => e.type === 'tool_result');
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ toolName: 'fs_write', isError: false });
    expect(terminals(events)).toHaveLength(1);
    expect(events.at(-1)).toMatchObject({ type: 'result', message: expect.stringContaining('TOOL-RESULT-SEEN') });
    // the model went on from the pending call: it read the tool's real result, not the placeholder
    expect(h.fake.requests.length).toBeGreaterThan(modelCalls);
    expect(lastToolResultSeen()).not.toContain('waits for approval');
    expect((await (await api(`/api/runs/${runId}`)).json()).status).toBe('ok');

    // the tool ran with the edited input
    const read = await start('asker', 'CALL_TOOL fs_read {"path":"/work/note.txt"}', sessionId);
    const { rest: readRest } = await until(await api(`/api/runs/${read.runId}/stream`), 'tool_call');
    expect((await readRest()).at(-1)).toMatchObject({ type: 'result', message: expect.stringContaining('edited') });
  });

  it('resumes a denied call: the tool never ran and the model read the reason', async () => {
    const { runId, sessionId } = await start('asker', write('never'));
    const { event, rest } = await until(await api(`/api/runs/${runId}/stream`), 'approval_required');
    await released();
    expect((await api(`/api/runs/${runId}/approvals/${event.approvalId}`, { method: 'POST', json: { decision: 'deny', message: 'not on a Friday' } })).status).toBe(200);
    const events = await rest();
    expect(events.find((e) => e.type === 'approval_decided')).toMatchObject({ decision: 'deny', reason: 'denied', message: 'not on a Friday' });
    expect(terminals(events)).toHaveLength(1);
    expect(events.at(-1)).toMatchObject({ type: 'result', message: expect.stringContaining('tool fs_write was not run: a person denied it: not on a Friday') });
    expect(lastToolResultSeen()).toContain('a person denied it: not on a Friday');
    const read = await start('asker', 'CALL_TOOL fs_read {"path":"/work/note.txt"}', sessionId);
    const { rest: readRest } = await until(await api(`/api/runs/${read.runId}/stream`), 'tool_call');
    expect((await readRest()).at(-1)?.message).not.toContain('never');
  });

  it('resumes an expired parked approval with a denial, reason expired', async () => {
    const { runId } = await start('hasty', write('late'));
    const { event, rest } = await until(await api(`/api/runs/${runId}/stream`), 'approval_required');
    const events = await rest();
    expect(events.find((e) => e.type === 'approval_decided')).toMatchObject({ approvalId: event.approvalId, decision: 'deny', reason: 'expired' });
    expect(terminals(events)).toHaveLength(1);
    expect(events.at(-1)).toMatchObject({ type: 'result', message: expect.stringContaining('the approval expired') });
    expect((await (await api(`/api/approvals/${event.approvalId}`)).json()).status).toBe('expired');
    expect((await (await api(`/api/runs/${runId}`)).json()).status).toBe('ok');
  });

  it("stays its session's run in progress: a second run is refused, queued behind it, or interrupts it", async () => {
    const { runId, sessionId } = await start('asker', write('busy'));
    const { event, rest } = await until(await api(`/api/runs/${runId}/stream`), 'approval_required');
    await released();
    const post = (multitask: string, prompt: string) => api('/api/runs', { method: 'POST', json: { profile: 'asker', sessionId, prompt, multitask } });
    expect((await post('reject', 'not now')).status).toBe(409);
    const queued = (await (await post('enqueue', 'after you')).json()) as { runId: string; status: string };
    expect(queued.status).toBe('queued');
    expect((await api(`/api/runs/${runId}/approvals/${event.approvalId}`, { method: 'POST', json: { decision: 'approve' } })).status).toBe(200);
    expect(terminals(await rest())).toEqual([expect.objectContaining({ type: 'result' })]);
    // the queued run started once the resumed one ended
    const { rest: queuedRest } = await until(await api(`/api/runs/${queued.runId}/stream`), 'queued');
    expect((await queuedRest()).at(-1)).toMatchObject({ type: 'result', message: expect.stringContaining('after you') });

    const second = await start('asker', write('interrupted'), sessionId);
    const parked = await until(await api(`/api/runs/${second.runId}/stream`), 'approval_required');
    await released();
    const newer = (await (await post('interrupt', 'me first')).json()) as { runId: string };
    expect(terminals(await parked.rest())).toEqual([expect.objectContaining({ type: 'error', reason: 'interrupted' })]);
    expect((await (await api(`/api/runs/${second.runId}`)).json())).toMatchObject({ status: 'cancelled', reason: 'interrupted' });
    const { rest: newerRest } = await until(await api(`/api/runs/${newer.runId}/stream`), 'queued');
    expect((await newerRest()).at(-1)).toMatchObject({ type: 'result', message: expect.stringContaining('me first') });
  });

  it('ends a cancelled parked run with one terminal event and frees its session', async () => {
    const { runId, sessionId } = await start('asker', write('cancel me'));
    const { event, rest } = await until(await api(`/api/runs/${runId}/stream`), 'approval_required');
    await released();
    expect((await api(`/api/runs/${runId}`, { method: 'DELETE' })).status).toBe(204);
    const events = await rest();
    expect(terminals(events)).toHaveLength(1);
    expect((await (await api(`/api/runs/${runId}`)).json()).status).toBe('cancelled');
    expect((await (await api(`/api/approvals/${event.approvalId}`)).json()).status).toBe('cancelled');
    const next = await start('asker', 'hello again', sessionId);
    const { rest: nextRest } = await until(await api(`/api/runs/${next.runId}/stream`), 'session_init');
    expect((await nextRest()).at(-1)).toMatchObject({ type: 'result' });
  });
});

describe('parked approvals with split roles (conductor, runner and worker processes)', () => {
  let cluster: Cluster;
  let db: ReturnType<typeof connect>;
  /**
   * Waits until the run's row says it is parked (its conversation saved): the runner frees its session a moment
   * before its conductor records the park, and a conductor that dies in between leaves the run to be adopted from its
   * runner (which ends it `interrupted` if that runner died too, as for any run that lost both).
   */
  const parked = (runId: string) =>
    vi.waitFor(async () => {
      const [row] = await db.begin(async (tx) => {
        await tx`select set_config('app.tenant_id', 'default', true)`;
        return tx`select parked_approval from runs where id = ${runId}`;
      });
      expect(row?.parked_approval).toEqual(expect.stringMatching(/^apr_/));
    }, { timeout: 15_000, interval: 100 });

  beforeAll(async () => {
    cluster = await startCluster({ conductors: 1, runners: 1, announce: true });
    db = connect(cluster.databaseUrl, { max: 1 });
  }, 120_000);
  afterAll(async () => {
    await db?.end({ timeout: 1 });
    await cluster?.stop();
  });

  it('a decision posted to the restarted conductor resumes the parked run, which ends `result`', async () => {
    const [conductor] = cluster.conductors;
    const [runner] = cluster.runners;
    const api = (path: string, init?: RequestInit & { json?: unknown }) => cluster.api(conductor!, path, init);
    const created = await api('/api/profiles', { method: 'POST', json: { name: 'asker', runtime: 'general', model: MODEL, tools: ['@files'], permissions: { fs_write: 'ask' } } });
    expect(created.status, cluster.logs()).toBe(201);
    const res = await api('/api/runs', { method: 'POST', json: { profile: 'asker', prompt: write('after the restart') } });
    expect(res.status).toBe(202);
    const { runId, sessionId } = (await res.json()) as { runId: string; sessionId: string };
    const { event } = await until(await api(`/api/runs/${runId}/stream`), 'approval_required');
    const approvalId = event.approvalId as string;
    // parked: the runner's session is free while the run waits
    await vi.waitFor(async () => expect(((await (await cluster.runnerApi(runner!, `/runner/sessions/${sessionId}`)).json()) as { session: { status: string } }).session.status).toBe('idle'), { timeout: 15_000, interval: 100 });
    await parked(runId);

    await conductor!.kill('SIGKILL');
    await conductor!.start();
    // the restarted conductor's boot sweep left the parked run alone: it still waits
    expect((await (await api(`/api/runs/${runId}`)).json()).status).toBe('waiting');

    const decided = await api(`/api/runs/${runId}/approvals/${approvalId}`, { method: 'POST', json: { decision: 'approve' } });
    expect(decided.status, cluster.logs()).toBe(200);
    const frames = sseFrames<RunEventLike>(await api(`/api/runs/${runId}/stream`));
    const events: RunEventLike[] = [];
    for await (const f of frames) events.push(f.event);
    expect(events.filter((e) => e.type === 'approval_required')).toHaveLength(1);
    expect(events.find((e) => e.type === 'approval_decided')).toMatchObject({ approvalId, decision: 'approve' });
    expect(events.filter((e) => e.type === 'tool_result')).toEqual([expect.objectContaining({ toolName: 'fs_write', isError: false })]);
    expect(terminals(events), cluster.logs()).toHaveLength(1);
    expect(events.at(-1)).toMatchObject({ type: 'result', message: expect.stringContaining('TOOL-RESULT-SEEN') });
    expect((await (await api(`/api/runs/${runId}`)).json()).status).toBe('ok');
  });

  it('resumes from the saved conversation when its runner and worker were lost too (the session hydrated from its state)', async () => {
    const [conductor] = cluster.conductors;
    const [runner] = cluster.runners;
    const api = (path: string, init?: RequestInit & { json?: unknown }) => cluster.api(conductor!, path, init);
    const res = await api('/api/runs', { method: 'POST', json: { profile: 'asker', prompt: write('after losing everything') } });
    expect(res.status).toBe(202);
    const { runId, sessionId } = (await res.json()) as { runId: string; sessionId: string };
    const { event } = await until(await api(`/api/runs/${runId}/stream`), 'approval_required');
    await vi.waitFor(async () => expect(((await (await cluster.runnerApi(runner!, `/runner/sessions/${sessionId}`)).json()) as { session: { status: string } }).session.status).toBe('idle'), { timeout: 15_000, interval: 100 });
    await parked(runId);

    // every process goes; the runner and the worker come back as fresh machines, without the session or its history
    await Promise.all([conductor!.kill('SIGKILL'), runner!.kill('SIGKILL'), cluster.worker.kill('SIGKILL')]);
    await cluster.worker.start();
    await runner!.start();
    await conductor!.start();
    expect((await cluster.runnerApi(runner!, `/runner/sessions/${sessionId}`)).status).toBe(404);

    const decided = await api(`/api/runs/${runId}/approvals/${event.approvalId}`, { method: 'POST', json: { decision: 'deny', message: 'not this one' } });
    expect(decided.status, cluster.logs()).toBe(200);
    const events: RunEventLike[] = [];
    for await (const f of sseFrames<RunEventLike>(await api(`/api/runs/${runId}/stream`))) events.push(f.event);
    expect(terminals(events), cluster.logs()).toHaveLength(1);
    // the model read the denial as the answer to its pending call, in the conversation it had before
    expect(events.at(-1)).toMatchObject({ type: 'result', message: expect.stringContaining('a person denied it: not this one') });
    const lastModelCall = JSON.stringify(cluster.fake.requests.at(-1)?.body ?? {});
    expect(lastModelCall).toContain('after losing everything');
    expect(lastModelCall).toContain('a person denied it: not this one');
  });
});
