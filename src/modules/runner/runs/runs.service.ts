import { createHash } from 'node:crypto';
import { CallError, transportMessage } from '../../../contracts/http-client.ts';
import { endsRunnerStream, isTerminal, runEvent, type RunEvent } from '../../../contracts/run-event.ts';
import { parkedApprovalOf, type ParkedResume } from '../../../contracts/approvals.ts';
import { resumed } from '../approvals/index.ts';
import { failedCallResult, toCallToolResult } from '../mcp/session-mcp.ts';
import type { Toolkit } from '../toolkit/toolkit.service.ts';
import type { SubTask } from '../../../contracts/runner.wire.ts';
import { MEMORY_TOOLS, selectTools } from '../../../contracts/toolkit.ts';
import type { McpServerSpec, ModelOverride, SkillPayload, WorkerRunRequest } from '../../../contracts/worker.ts';
import { describeError } from '../../../shared/errors.ts';
import { createLogger } from '../../../shared/log.ts';
import { bindIterable, contextWith, endSpan, SpanKind, startSpan, type TraceContext } from '../../../shared/tracing/index.ts';
import { createSession, isSandboxSession, type SessionsDeps } from '../sessions/sessions.service.ts';
import { newRunId } from '../workers/sandbox/sandbox-workers.ts';
import type { SessionRecord } from '../sessions/sessions.store.ts';
import { SESSION_TOKEN_PARAM, type SessionTokens } from '../mcp/session-token.ts';
import { TOOLSET_PARAM } from '../../../contracts/worker.ts';
import type { VfsView } from '../vfs/index.ts';
import { carriesFiles, forWorker, writeSkillFiles } from './skill-files.ts';
import type { StdioMcpHost } from '../mcp/stdio-mcp.ts';
import { DEFAULT_MCP_CALL_MS, frontable, unfronted, type RemoteMcpHost } from '../mcp/remote-mcp.ts';
import { APPROVAL_HOLD_MAX_S } from '../../../contracts/approvals.ts';
import type { RunCallbacksClient } from '../../../contracts/run-callbacks.client.ts';
import { keepRunTokenFresh } from './run-token.ts';

/** An approval's longest hold on the runner, and some: what a worker's wait for a gated call must cover. */
const APPROVAL_HOLD_MS = (APPROVAL_HOLD_MAX_S + 300) * 1000;

/**
 * One run on this runner: resolve the session, hand the subtask to the session's worker, forward its events. The
 * stream always ends with exactly one `result` or `error`, whatever the worker does (refuses, dies, stops early), and
 * cancelling it aborts the worker request, which cancels the model call.
 */
export interface RunsDeps extends SessionsDeps {
  publicUrl: string;
  /** Mints the session token the worker's `sessionMcpUrl` carries. */
  tokens: SessionTokens;
  /** Aborted when the runner closes: every run in flight ends. */
  closing: AbortSignal;
  /** The session's VirtualFS, where packaged skills' files are written before the worker starts. */
  skillView?: (rec: SessionRecord) => VfsView;
  /** Starts a run's stdio MCP servers in the session's sandbox (absent: such servers are refused). */
  stdio?: StdioMcpHost;
  /**
   * Fronts a run's HTTP and SSE MCP servers (the profile's, a /v1 agent's), so the permission gate sees their calls
   * (absent: the worker calls them itself, and `mcp:` policies cannot hold; unit tests' runners).
   */
  remote?: RemoteMcpHost;
  /** Runs the pending call of a resumed parked run (absent: such a run is refused). */
  toolkit?: Toolkit;
  /** Renews a run's token while the run lasts (run-token.ts; absent: no conductor to call, so no token either). */
  conductor?: Pick<RunCallbacksClient, 'renewRunToken'>;
}

export interface StartedRun {
  session: SessionRecord;
  events: AsyncIterable<RunEvent>;
  cancel(reason?: string): void;
}

type Outcome = 'ok' | 'error' | 'cancelled';
const log = createLogger('runner:runs');

/** What travels with a run besides its SubTask: the conductor's run token (for the tools) and resolved skills. */
export interface RunExtras {
  runToken?: string;
  skills?: SkillPayload[];
  /** Per-run model override (a tenant's own key; a /v1 model) and extra MCP servers (the /v1 agents API); forwarded to the worker, never stored. */
  model?: ModelOverride;
  mcpServers?: McpServerSpec[];
  /** Environment variables for the session's commands from now on (a /v1 environment's `env`); never stored. */
  env?: Record<string, string>;
  /** The caller's trace (its `traceparent`): the run's span is its child. */
  trace?: TraceContext;
  /** A call of this run that waits for approval parks it (approvals/); honoured for `general` sessions only. */
  parkable?: boolean;
  /** Resumes a parked run: its pending call runs (or fails, denied) here, then the worker goes on from it. */
  resume?: ParkedResume;
}

/** Throws (404 unknown profile or session, 409 busy) before anything streams; after that, failures are events. */
export function startRun(deps: RunsDeps, tenant: string, subTask: SubTask, extras: RunExtras = {}): StartedRun {
  const rec = subTask.sessionId ? deps.sessions.require(tenant, subTask.sessionId) : createSession(deps, tenant, subTask.profile);
  const ac = deps.sessions.beginRun(rec, subTask.prompt ?? '');
  // kept with the active run for its tools (delegate names this run as parent); finishRun clears both
  rec.activeRunId = subTask.id;
  rec.runToken = extras.runToken;
  const tokenKeeper = extras.runToken && deps.conductor ? keepRunTokenFresh(deps.conductor, rec) : undefined;
  if (extras.env) rec.commandEnv = extras.env;
  const side = sideChannel();
  rec.runOutput = side.push;
  rec.toolCalls = [];
  rec.parkable = extras.parkable === true && rec.runtime === 'general';
  rec.parked = undefined;
  deps.metrics.runStarted();
  const onClosing = () => ac.abort(new Error('runner shutting down'));
  deps.closing.addEventListener('abort', onClosing, { once: true });
  const cancelMessage = () => `run cancelled: ${describeError(ac.signal.reason ?? 'cancelled')}`;
  const span = startSpan('svc.runner.run', {
    parent: extras.trace,
    kind: SpanKind.SERVER,
    attributes: { 'svc.run.id': subTask.id ?? '', 'svc.session.id': rec.id, 'svc.tenant.id': tenant, 'svc.runtime': rec.runtime, 'svc.profile': rec.profile.name },
  });
  const spanContext = contextWith(span, extras.trace);

  const stdioKey = `${rec.id}:${subTask.id ?? newRunId()}`;
  let settled = false;
  const settle = (outcome: Outcome) => {
    if (settled) return;
    settled = true;
    tokenKeeper?.stop();
    void deps.stdio?.close(stdioKey);
    void deps.remote?.close(stdioKey);
    span.setAttribute('svc.run.outcome', outcome);
    endSpan(span, outcome === 'error' ? 'run ended with an error' : undefined);
    deps.closing.removeEventListener('abort', onClosing);
    deps.sessions.finishRun(rec, outcome);
    deps.metrics.runFinished(outcome);
    log.info('run finished', { sessionId: rec.id, runId: subTask.id, outcome });
  };

  /** Writes packaged skills' files into the session; an error message when they cannot be placed. */
  async function placeSkillFiles(): Promise<string | undefined> {
    if (!carriesFiles(extras.skills)) return undefined;
    if (!deps.skillView) return 'this runner cannot place skill files';
    try {
      await writeSkillFiles(deps.skillView(rec), extras.skills!);
    } catch (err) {
      return `skill files could not be placed: ${describeError(err)}`;
    }
    return undefined;
  }

  /**
   * A resumed parked run: the decision shows, the pending call runs here with the (possibly edited) input, or fails
   * with the denial's reason, and its result shows; the worker then continues the model's turn with that result.
   */
  async function* resumeCall(r: ParkedResume): AsyncGenerator<RunEvent, { approvalId: string; output: unknown } | undefined> {
    if (rec.runtime !== 'general') return yield runEvent('error', { message: `a parked run resumes on the general runtime only, not ${rec.runtime}` }), undefined;
    if (!deps.toolkit) return yield runEvent('error', { message: 'this runner cannot resume a parked run' }), undefined;
    const settled = resumed(r);
    yield settled.event;
    let output: unknown;
    if (!settled.outcome.approved) output = failedCallResult(`tool ${r.toolName} was not run: ${settled.outcome.reason}`);
    else {
      try {
        const { def, result } = await deps.toolkit.invoke(rec, r.toolName, settled.outcome.input, ac.signal, undefined, { approved: true });
        output = toCallToolResult(def, result);
      } catch (err) {
        output = failedCallResult(describeError(err)); // 403/404: the tool left the profile's scope meanwhile
      }
    }
    yield runEvent('tool_result', { ...(r.toolCallId ? { toolCallId: r.toolCallId } : {}), toolName: r.toolName, output, isError: (output as { isError?: boolean }).isError === true });
    return { approvalId: r.approvalId, output };
  }

  let workerResume: WorkerRunRequest['resume'];
  async function* fromWorker(): AsyncGenerator<RunEvent> {
    // the run's servers at a URL are reached through this runner, which holds their headers and gates their calls
    if (deps.remote) deps.remote.open(rec, stdioKey, runMcpServers(rec, extras).filter(frontable));
    const front = Boolean(deps.remote);
    if (extras.resume) {
      const resume = yield* resumeCall(extras.resume);
      if (!resume) return;
      workerResume = resume;
    }
    if (isSandboxSession(rec)) {
      const failed = await placeSkillFiles();
      if (failed) return yield runEvent('error', { message: failed });
      // the session's own worker, over the callback protocol; its MCP URL carries a worker token, minted there
      yield* deps.sandboxWorkers.run(rec, subTask.id ?? newRunId(), (mcpUrl) => workerBody(rec, subTask, { ...extras, workerResume }, mcpUrl, front), ac.signal);
      return;
    }
    const { endpoint } = deps.slots.slot(rec.runtime);
    if (!endpoint) {
      yield runEvent('error', { message: `no worker configured for runtime ${rec.runtime}` });
      return;
    }
    const failed = await placeSkillFiles();
    if (failed) return yield runEvent('error', { message: failed });
    // stdio MCP servers start here, in the session's sandbox; the worker reaches them through this runner
    const stdioSpecs = (extras.mcpServers ?? []).filter((m) => m.transport === 'stdio');
    if (stdioSpecs.length) {
      if (!deps.stdio) return yield runEvent('error', { message: 'this runner cannot start stdio MCP servers' });
      try {
        await deps.stdio.open(rec, stdioKey, stdioSpecs);
      } catch (err) {
        return yield runEvent('error', { message: describeError(err) });
      }
      const relayed = (extras.mcpServers ?? []).map((m) =>
        m.transport === 'stdio'
          ? { name: m.name, transport: 'http', url: `${deps.publicUrl}/runner/sessions/${encodeURIComponent(rec.id)}/mcp/stdio/${encodeURIComponent(m.name)}?${SESSION_TOKEN_PARAM}=${deps.tokens.mint(rec.id)}`, platform: true, ...(m.allowedTools ? { allowedTools: m.allowedTools } : {}) }
          : m,
      );
      extras = { ...extras, mcpServers: relayed };
    }
    let run;
    try {
      run = await endpoint.client.run(workerBody(rec, subTask, { ...extras, workerResume }, sessionMcpUrl(deps.publicUrl, rec.id, deps.tokens, toolScopeOf(rec.profile)), front), ac.signal);
    } catch (err) {
      if (ac.signal.aborted) throw err;
      // a worker that answered with an error status is alive; only a transport failure counts against the slot
      const answered = err instanceof CallError && err.status !== undefined;
      if (answered) endpoint.recordRun('', undefined);
      else endpoint.recordFailure(err);
      yield runEvent('error', { message: `${answered ? 'worker refused the run' : 'worker unavailable'}: ${describeError(err)}` });
      return;
    }
    endpoint.recordRun(run.instanceId, run.inflight);
    try {
      yield* run.events;
    } catch (err) {
      if (!ac.signal.aborted) endpoint.recordFailure(err);
      throw err;
    }
  }

  /** Exactly one terminal: the worker's own, or a synthetic `error` saying why there was none. */
  async function* guarded(): AsyncGenerator<RunEvent> {
    try {
      for await (const event of fromWorker()) {
        // a turn that ended on a parked call: the run is not over, it parks (approvals/)
        if (event.type === 'result' && rec.parked) return yield runEvent('parked', { ...rec.parked });
        yield event;
        if (isTerminal(event)) return;
      }
      yield runEvent('error', { message: ac.signal.aborted ? cancelMessage() : 'worker stream ended without a result' });
    } catch (err) {
      yield runEvent('error', { message: ac.signal.aborted ? cancelMessage() : `worker stream broke: ${transportMessage(err)}` });
    }
  }

  async function* forward(): AsyncGenerator<RunEvent> {
    let outcome: Outcome = 'cancelled';
    try {
      for await (const raw of side.merge(guarded())) {
        // the worker calls it `session`; the runner stream names it `session_init` (seed, RunEvent)
        const event: RunEvent = raw.type === 'session' ? { ...raw, type: 'session_init' } : raw;
        if (event.type === 'session_init' && event.runtimeSessionId) rec.runtimeSessionId = event.runtimeSessionId;
        // an approval names the model's call it holds (approvals/): remembered until an approval claims it
        if (event.type === 'tool_call' && event.toolCallId && event.toolName) (rec.toolCalls ??= []).push({ id: event.toolCallId, name: event.toolName }) > 32 && rec.toolCalls.shift();
        // the parked call's placeholder answer is the model's business only: the run shows its real result on resume
        if (event.type === 'tool_result' && parkedApprovalOf(event.output)) continue;
        if (endsRunnerStream(event)) {
          outcome = ac.signal.aborted ? 'cancelled' : event.type === 'result' || event.type === 'parked' ? 'ok' : 'error';
          // settle before the caller sees the terminal: its very next run on this session must not find it busy
          settle(outcome);
        }
        deps.metrics.eventForwarded();
        yield event;
      }
    } finally {
      // a terminal `result` may leave the worker's response open; release it now
      if (!ac.signal.aborted) ac.abort(new Error('run finished'));
      settle(outcome);
    }
  }

  // the worker call and every step of the run happen under the run's span (the worker client injects it)
  const gen = bindIterable(spanContext, { [Symbol.asyncIterator]: forward })[Symbol.asyncIterator]();
  const events: AsyncIterable<RunEvent> = {
    [Symbol.asyncIterator]: () => ({
      next: () => gen.next(),
      // a generator that never started skips its `finally`; settling here keeps the session from staying `running`
      return: async (value?: unknown) => {
        const result = await gen.return!(value as undefined);
        settle('cancelled');
        return result;
      },
    }),
  };
  return { session: rec, events, cancel: (reason = 'caller went away') => ac.abort(new Error(reason)) };
}

/**
 * Events that join a run from beside its worker (a running command's output, reported by the toolkit on this runner):
 * merged into the run's stream between the worker's events, never after its terminal event.
 */
function sideChannel() {
  let queue: RunEvent[] = [];
  let wake: (() => void) | undefined;
  return {
    push(event: RunEvent) {
      queue.push(event);
      wake?.();
    },
    async *merge(source: AsyncIterable<RunEvent>): AsyncGenerator<RunEvent> {
      const it = source[Symbol.asyncIterator]();
      try {
        let next = it.next();
        for (;;) {
          const woken = new Promise<'side'>((resolve) => (wake = () => resolve('side')));
          const first = queue.length ? 'side' : await Promise.race([next.then(() => 'worker' as const, () => 'worker' as const), woken]);
          wake = undefined;
          if (first === 'side') {
            const ready = queue;
            queue = [];
            yield* ready;
            continue;
          }
          const r = await next;
          if (r.done) return;
          yield r.value;
          if (endsRunnerStream(r.value)) return;
          next = it.next();
        }
      } finally {
        queue = [];
        // not awaited: a worker event may still be pending, and the caller aborts the run right after this
        void it.return?.()?.catch(() => {});
      }
    },
  };
}

/** A run's MCP servers: the profile's (a tenant's, whatever a stored spec says: only svc's own extras are `platform`), then the run's. */
function runMcpServers(rec: SessionRecord, extras: RunExtras): McpServerSpec[] {
  const own = (rec.profile.mcpServers ?? []).map((s) => ({ ...s, platform: undefined, runTokenAuth: undefined }));
  return [...own, ...(extras.mcpServers ?? [])];
}

/**
 * A fronted server as the worker receives it: at its relay beside the session's MCP endpoint (same token, so a
 * sandbox worker reaches it through its socket too), svc's own, without its headers. The worker's wait for a call
 * covers an approval's longest hold on top of the server's own call timeout, which the runner applies.
 */
function relayed(spec: McpServerSpec, mcpUrl: string): McpServerSpec {
  const url = new URL(mcpUrl);
  url.pathname = `${url.pathname}/server/${encodeURIComponent(spec.name)}`;
  url.searchParams.delete(TOOLSET_PARAM);
  const { headers: _headers, transport: _transport, runTokenAuth: _runTokenAuth, ...rest } = spec;
  return { ...rest, transport: 'http', url: url.href, platform: true, callTimeoutMs: (spec.callTimeoutMs ?? DEFAULT_MCP_CALL_MS) + APPROVAL_HOLD_MS };
}

function workerBody(rec: SessionRecord, subTask: SubTask, extras: RunExtras & { workerResume?: WorkerRunRequest['resume'] }, mcpUrl: string, front = false): WorkerRunRequest {
  const p = rec.profile;
  const { skills } = extras;
  const all = runMcpServers(rec, extras).map((s) => (front && frontable(s) ? relayed(s, mcpUrl) : unfronted(s, extras.runToken)));
  const mcpServers = all.length || p.mcpServers ? all : undefined;
  return {
    sessionId: rec.id,
    profile: { name: p.name, runtime: p.runtime, systemPrompt: withMemoryNote(p.systemPrompt, p.memoryStores), tools: workerAllowlist(p.tools, Boolean(p.memoryStores?.length)), model: p.model },
    subtask: { title: subTask.title ?? '', prompt: subTask.prompt ?? '', files: subTask.files },
    sessionMcpUrl: mcpUrl,
    ...(skills?.length ? { skills: forWorker(skills) } : {}),
    mcpServers,
    ...(extras.model ? { modelOverride: extras.model } : {}),
    ...(extras.workerResume ? { resume: extras.workerResume } : {}),
  };
}

/**
 * A profile that mounts memory stores tells its model so in the system prompt (as Claude Managed Agents does), besides
 * the memory tool's own description: where its memory is, and to look there first.
 */
export function withMemoryNote(systemPrompt: string | undefined, mounts: ReadonlyArray<{ name: string; access?: string }> | undefined): string | undefined {
  if (!mounts?.length) return systemPrompt;
  const dirs = mounts.map((m) => `/memories/${m.name}/${m.access === 'read' ? ' (read-only)' : ''}`).join(', ');
  const note = `You have a memory that outlives this conversation: ${dirs}. Use the memory tool: view /memories before you start a task, and record what will help later.`;
  return systemPrompt ? `${systemPrompt}\n\n${note}` : note;
}

/** What decides the tools a session's MCP endpoint lists: the profile's selectors, and whether it mounts memory. */
export function toolScopeOf(p: { tools?: readonly string[]; memoryStores?: readonly unknown[] }): readonly string[] | undefined {
  return p.memoryStores?.length ? [...(p.tools ?? []), '+memory'] : p.tools;
}

/** The session's MCP endpoint with a fresh session token: what one run of this session (and nothing else) receives. */
export function sessionMcpUrl(publicUrl: string, sessionId: string, tokens: SessionTokens, tools?: readonly string[]): string {
  return `${publicUrl}/runner/sessions/${encodeURIComponent(sessionId)}/mcp?${SESSION_TOKEN_PARAM}=${tokens.mint(sessionId)}&${TOOLSET_PARAM}=${toolsetOf(tokens, tools)}`;
}

/**
 * Names what the session's MCP endpoint serves: this runner process and the profile's tool selection. A worker keeps
 * its connection to the endpoint (handshake and tool list) across runs of the session while this value stays the
 * same (worker mcp-catalog.ts); a restarted runner or a changed selection makes it reconnect.
 */
function toolsetOf(tokens: SessionTokens, tools: readonly string[] | undefined): string {
  return createHash('sha256').update(`${tokens.instance}\u0000${JSON.stringify(tools ?? null)}`).digest('base64url').slice(0, 16);
}

/**
 * The worker treats plain names in `profile.tools` as an allowlist over every tool it sees (session toolkit and
 * profile MCP servers) and ignores `@bundle` selectors. A list that mixes the two (`['@files', 'ext__search']`) would
 * then hide the bundle's tools, so such a list is sent with its bundles spelled out as tool names. A list with no
 * plain names filters nothing on the worker and is sent as is (the session MCP endpoint already applies it).
 */
export function workerAllowlist(tools: readonly string[] | undefined, memory = false): string[] | undefined {
  if (!tools?.some((t) => !t.startsWith('@'))) return tools ? [...tools] : undefined;
  const names = new Set(tools.filter((t) => !t.startsWith('@')));
  const bundles = tools.filter((t) => t.startsWith('@'));
  if (bundles.length) for (const name of selectTools(bundles)) names.add(name);
  // the memory tools come with the profile's memory stores, not its selectors: an allowlist must not hide them
  if (memory) for (const name of MEMORY_TOOLS) names.add(name);
  return [...names];
}
