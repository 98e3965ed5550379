import type { HeldDecision, ParkedResume } from './approvals.ts';
import { readNdjson } from '../shared/ndjson.ts';
import { withTerminal, type RunEvent } from './run-event.ts';
import { INTERNAL_TOKEN_HEADER, RUN_ADOPTABLE_HEADER, RUN_TOKEN_HEADER, TENANT_HEADER } from './runner.ts';
import { RUNTIME_SESSION_HEADER, type McpServerSpec, type ModelOverride, type SkillPayload } from './worker.ts';
import type { StateBundle } from './worker.client.ts';
import type {
  HydrateRequest,
  PoolSpec,
  ProfileSpec,
  RunnerInfo,
  RunnerRuntime,
  RunnerSession,
  RunnerSessionListItem,
  RunnerTopology,
  SubTask,
  ToolResult,
  ToolSpec,
} from './runner.wire.ts';
import { CallError, send, throwForStatus, transportMessage, trimBase, type FetchLike } from './http-client.ts';
import { injectTrace } from '../shared/tracing/index.ts';

export type * from './runner.wire.ts';
export { CallError, type FetchLike } from './http-client.ts';

/**
 * The conductor's typed client for one runner (seed 000, "Runner wire API"). Two transports implement it: HTTP
 * (`createRunnerClient`: every tenant-scoped method forwards the tenant in TENANT_HEADER, every call carries the
 * internal token when one is configured, non-2xx answers throw CallError with the runner's status and `error` string)
 * and direct, for a runner in the conductor's process (the runner module's `direct`: function calls and the runner's
 * own RunEvent objects, failing with the same CallErrors). runner.client.test.ts runs against both.
 */
export interface RunnerClient {
  readonly baseUrl: string;
  info(): Promise<RunnerInfo>;
  runtimes(): Promise<RunnerRuntime[]>;
  topology(): Promise<RunnerTopology>;
  listProfiles(tenant: string): Promise<{ name: string; runtime: string }[]>;
  putProfile(tenant: string, profile: ProfileSpec): Promise<void>;
  deleteProfile(tenant: string, name: string): Promise<void>;
  listPools(tenant: string): Promise<PoolSpec[]>;
  putPool(tenant: string, pool: PoolSpec): Promise<void>;
  deletePool(tenant: string, name: string): Promise<void>;
  listSessions(tenant: string): Promise<RunnerSessionListItem[]>;
  /** With `profile`, the runner stores it first (the profile as this conductor holds it; an older runner ignores it). */
  createSession(tenant: string, profileName: string, profile?: ProfileSpec, opts?: { sandboxOf?: string }): Promise<string>;
  getSession(tenant: string, sessionId: string): Promise<RunnerSession>;
  sessionHealth(tenant: string, sessionId: string): Promise<{ healthy: boolean; error?: string }>;
  deleteSession(tenant: string, sessionId: string): Promise<void>;
  /** undefined when the runner has no state for the session (404). */
  exportState(tenant: string, sessionId: string): Promise<StateBundle | undefined>;
  hydrate(tenant: string, sessionId: string, body: HydrateRequest): Promise<void>;
  /**
   * Starts a run. Pre-stream refusals (400, 404, 409) throw; once accepted, the events always end with one `result` or
   * `error` (a runner that vanishes mid-stream yields a synthetic `error`). Aborting `signal` cancels the run on the
   * runner and the worker. `opts.runToken` lets the run's tools call back into the conductor (delegate, notify);
   * `opts.skills` are the profile's skills, resolved from the catalog, for the worker's system prompt.
   */
  run(tenant: string, subTask: SubTask, signal?: AbortSignal, opts?: RunOptions): Promise<AsyncIterable<RunEvent>>;
  /**
   * Re-attaches to an adoptable run after the event with id `after` (ids count the run's events from 1). Throws
   * CallError 404 when the runner no longer has the run, 410 when it no longer keeps the events after `after`.
   */
  attach(tenant: string, runId: string, after: number, signal?: AbortSignal): Promise<AsyncIterable<RunEvent>>;
  /** Cancels an adoptable run on the runner (hanging up only detaches from it); false when the runner has no such run. */
  cancelRun(tenant: string, runId: string): Promise<boolean>;
  /** Hands a decision to the tool call held for approval `approvalId` (contracts/approvals.ts); false when none waits. */
  deliverApproval(tenant: string, sessionId: string, approvalId: string, decision: HeldDecision): Promise<boolean>;
  /** Every platform tool of the runner. */
  toolkitSpecs(): Promise<ToolSpec[]>;
  /** The tools the session's profile may use. */
  sessionToolkitSpecs(tenant: string, sessionId: string): Promise<ToolSpec[]>;
  /** Runs one tool for the session; a failing tool resolves with ok false, an out-of-scope one throws 403. */
  invokeTool(tenant: string, sessionId: string, toolName: string, input: unknown, opts?: { platform?: boolean }): Promise<ToolResult>;
  /** Like invokeTool, with the tool's output (a running command's) handed to `onOutput` as it comes. */
  invokeToolStreaming(tenant: string, sessionId: string, toolName: string, input: unknown, onOutput: (text: string) => void, opts?: { platform?: boolean }): Promise<ToolResult>;
  healthz(): Promise<boolean>;
  metrics(): Promise<string>;
  /** VFS and sandbox-worker leases: tenant-scoped reads that the conductor merges across runners. */
  vfsLeases(tenant: string, signal?: AbortSignal): Promise<unknown[]>;
  vfsLease(tenant: string, sessionId: string): Promise<unknown>;
  workerLeases(tenant: string, signal?: AbortSignal): Promise<unknown[]>;
  workerLease(tenant: string, sessionId: string): Promise<unknown>;
}

export interface RunOptions {
  runToken?: string;
  skills?: SkillPayload[];
  /** Per-run model override (a tenant's own key; a /v1 model) and extra MCP servers (the /v1 agents API). */
  model?: ModelOverride;
  mcpServers?: McpServerSpec[];
  env?: Record<string, string>;
  /** Start the run adoptable: it outlives this connection (RUN_ADOPTABLE_HEADER); cancel it with `cancelRun`. */
  adoptable?: boolean;
  /** A call that waits for approval parks the run (conductor runs/parking.ts); only for runs that can be re-dispatched. */
  parkable?: boolean;
  /** Resume a parked run with its approval's decision. */
  resume?: ParkedResume;
}

export function createRunnerClient(opts: { baseUrl: string; fetch?: FetchLike; internalToken?: string }): RunnerClient {
  const base = trimBase(opts.baseUrl);
  const fetchFn: FetchLike = opts.fetch ?? ((req) => fetch(req));

  async function call(method: string, path: string, o: { tenant?: string; json?: unknown; signal?: AbortSignal; headers?: Record<string, string> } = {}): Promise<Response> {
    const headers: Record<string, string> = { ...o.headers };
    if (opts.internalToken) headers[INTERNAL_TOKEN_HEADER] = `Bearer ${opts.internalToken}`;
    if (o.tenant !== undefined) headers[TENANT_HEADER] = o.tenant;
    if (o.json !== undefined) headers['content-type'] = 'application/json';
    injectTrace(headers); // the caller's span (a run's, on the conductor) continues on the runner
    const body = o.json === undefined ? undefined : JSON.stringify(o.json);
    const what = `runner ${method} ${path}`;
    const res = await send(fetchFn, new Request(base + path, { method, headers, body, signal: o.signal }), what);
    if (!res.ok) await throwForStatus(res, what);
    return res;
  }
  const json = async <T>(res: Promise<Response>): Promise<T> => (await res).json() as Promise<T>;
  const done = async (res: Promise<Response>): Promise<void> => void (await (await res).body?.cancel().catch(() => {}));
  const sid = (id: string) => `/runner/sessions/${encodeURIComponent(id)}`;

  return {
    baseUrl: base,
    info: () => json(call('GET', '/runner/info')),
    runtimes: async () => (await json<{ runtimes: RunnerRuntime[] }>(call('GET', '/runner/runtimes'))).runtimes,
    topology: () => json(call('GET', '/runner/topology')),
    listProfiles: async (tenant) => (await json<{ profiles: { name: string; runtime: string }[] }>(call('GET', '/runner/profiles', { tenant }))).profiles,
    putProfile: (tenant, profile) => done(call('POST', '/runner/profiles', { tenant, json: { profile } })),
    deleteProfile: (tenant, name) => done(call('DELETE', `/runner/profiles/${encodeURIComponent(name)}`, { tenant })),
    listPools: async (tenant) => (await json<{ pools: PoolSpec[] }>(call('GET', '/runner/pools', { tenant }))).pools,
    putPool: (tenant, pool) => done(call('POST', '/runner/pools', { tenant, json: { pool } })),
    deletePool: (tenant, name) => done(call('DELETE', `/runner/pools/${encodeURIComponent(name)}`, { tenant })),
    listSessions: async (tenant) => (await json<{ sessions: RunnerSessionListItem[] }>(call('GET', '/runner/sessions', { tenant }))).sessions,
    createSession: async (tenant, profileName, profile, opts) =>
      (await json<{ sessionId: string }>(call('POST', '/runner/sessions', { tenant, json: { profileName, ...(profile ? { profile } : {}), ...(opts?.sandboxOf ? { sandboxOf: opts.sandboxOf } : {}) } }))).sessionId,
    getSession: async (tenant, id) => (await json<{ session: RunnerSession }>(call('GET', sid(id), { tenant }))).session,
    sessionHealth: (tenant, id) => json(call('GET', `${sid(id)}/health`, { tenant })),
    deleteSession: (tenant, id) => done(call('DELETE', sid(id), { tenant })),
    async exportState(tenant, id) {
      try {
        const res = await call('GET', `${sid(id)}/state`, { tenant });
        return {
          bytes: new Uint8Array(await res.arrayBuffer()),
          contentType: res.headers.get('content-type') ?? 'application/octet-stream',
          runtimeSessionId: res.headers.get(RUNTIME_SESSION_HEADER) ?? '',
        };
      } catch (err) {
        if (err instanceof CallError && err.status === 404) return undefined;
        throw err;
      }
    },
    hydrate: (tenant, id, body) => done(call('POST', `${sid(id)}/hydrate`, { tenant, json: body })),
    async run(tenant, subTask, signal, runOpts = {}) {
      const json = {
        subTask,
        ...(runOpts.skills?.length ? { skills: runOpts.skills } : {}),
        ...(runOpts.model ? { model: runOpts.model } : {}),
        ...(runOpts.mcpServers?.length ? { mcpServers: runOpts.mcpServers } : {}),
        ...(runOpts.env ? { env: runOpts.env } : {}),
        ...(runOpts.parkable ? { parkable: true } : {}),
        ...(runOpts.resume ? { resume: runOpts.resume } : {}),
      };
      const headers: Record<string, string> = {};
      if (runOpts.runToken) headers[RUN_TOKEN_HEADER] = runOpts.runToken;
      if (runOpts.adoptable) headers[RUN_ADOPTABLE_HEADER] = '1';
      return eventsOf(await call('POST', '/runner/run', { tenant, json, signal, headers }), signal);
    },
    attach: async (tenant, runId, after, signal) => eventsOf(await call('GET', `/runner/runs/${encodeURIComponent(runId)}/events?after=${after}`, { tenant, signal }), signal),
    async cancelRun(tenant, runId) {
      try {
        await done(call('POST', `/runner/runs/${encodeURIComponent(runId)}/cancel`, { tenant }));
        return true;
      } catch (err) {
        if (err instanceof CallError && err.status === 404) return false;
        throw err;
      }
    },
    async deliverApproval(tenant, id, approvalId, decision) {
      try {
        await done(call('POST', `${sid(id)}/approvals/${encodeURIComponent(approvalId)}`, { tenant, json: decision }));
        return true;
      } catch (err) {
        if (err instanceof CallError && err.status === 404) return false;
        throw err;
      }
    },
    toolkitSpecs: async () => (await json<{ specs: ToolSpec[] }>(call('GET', '/runner/toolkit/specs'))).specs,
    sessionToolkitSpecs: async (tenant, id) => (await json<{ specs: ToolSpec[] }>(call('GET', `${sid(id)}/toolkit/specs`, { tenant }))).specs,
    invokeTool: async (tenant, id, toolName, input, opts) =>
      (await json<{ result: ToolResult }>(call('POST', `${sid(id)}/toolkit/invoke`, { tenant, json: { toolName, input, ...(opts?.platform ? { platform: true } : {}) } }))).result,
    async invokeToolStreaming(tenant, id, toolName, input, onOutput, opts) {
      const res = await call('POST', `${sid(id)}/toolkit/invoke`, { tenant, json: { toolName, input, stream: true, ...(opts?.platform ? { platform: true } : {}) } });
      if (!res.body) throw new CallError(res.status, 'runner toolkit invoke: response has no body');
      for await (const line of readNdjson<{ output?: string; result?: ToolResult }>(res.body)) {
        if (line.result) return line.result;
        if (line.output) onOutput(line.output);
      }
      throw new CallError(res.status, 'runner toolkit invoke: the stream ended without a result');
    },
    healthz: async () => {
      try {
        return (await (await call('GET', '/healthz')).text()).trim() === 'ok';
      } catch {
        return false;
      }
    },
    metrics: async () => (await call('GET', '/metrics')).text(),
    vfsLeases: (tenant, signal) => json(call('GET', '/runner/vfs/leases', { tenant, signal })),
    vfsLease: (tenant, id) => json(call('GET', `${sid(id)}/vfs`, { tenant })),
    workerLeases: (tenant, signal) => json(call('GET', '/runner/worker/leases', { tenant, signal })),
    workerLease: (tenant, id) => json(call('GET', `${sid(id)}/worker`, { tenant })),
  };
}

/** A run's NDJSON events: a runner that vanishes mid-stream still yields exactly one terminal event. */
function eventsOf(res: Response, signal: AbortSignal | undefined): AsyncIterable<RunEvent> {
  if (!res.body) throw new CallError(res.status, 'runner run: response has no body');
  return runEventsOf(readNdjson<RunEvent>(res.body, signal), signal);
}

/**
 * What `run` and `attach` return on either transport: the runner's events, ending with exactly one terminal event
 * (a stream that breaks or stops short gets a synthetic `error`, saying "cancelled" once the caller aborted).
 */
export function runEventsOf(source: AsyncIterable<RunEvent>, signal: AbortSignal | undefined): AsyncIterable<RunEvent> {
  const events = withTerminal(source, (err) => (signal?.aborted ? 'run cancelled by the caller' : `runner stream broke: ${transportMessage(err)}`));
  return signal ? cancelAware(events, signal) : events;
}

/** After the caller aborts, a stream that merely stopped should say "cancelled", not "ended without a result". */
async function* cancelAware(events: AsyncIterable<RunEvent>, signal: AbortSignal): AsyncGenerator<RunEvent> {
  for await (const event of events) {
    if (event.type === 'error' && signal.aborted && event.message === 'stream ended without a result') {
      yield { ...event, message: 'run cancelled by the caller' };
    } else yield event;
  }
}
