import type { RunEvent } from '../../../contracts/run-event.ts';
import type { ProfileSpec, RunnerSession } from '../../../contracts/runner.wire.ts';
import { conflict, notFound } from '../../../shared/errors.ts';

/**
 * The runner's live sessions, in memory. A session belongs to one tenant and keeps a snapshot of its profile taken at
 * creation, so a later profile change or delete never alters a session mid-conversation. Shut-down sessions stay
 * visible (status `shutdown`) so callers can tell "ended" from "never existed", up to a bounded number.
 */
export interface SessionRecord extends Omit<RunnerSession, 'profile'> {
  tenant: string;
  /** The profile snapshot (the wire form names only the profile). */
  profile: ProfileSpec;
  /** Aborts the run in flight; set only while status is `running`. */
  activeRun: AbortController | undefined;
  /** Id of the run in flight (its SubTask id): a delegated child run names it as parent. */
  activeRunId: string | undefined;
  /** The conductor's run token for the run in flight; the tools that call the conductor present it. Never leaves the runner. */
  runToken: string | undefined;
  /** Adds an event to the run in flight (a running command's output); set only while a run is in flight. */
  runOutput?: (event: RunEvent) => void;
  /** Environment variables for the session's commands (a /v1 environment's `env`), as its last run carried them. */
  commandEnv?: Record<string, string>;
  /** The `tool_call`s of the run in flight no approval has claimed yet (id and tool name), newest last; at most 32. */
  toolCalls?: Array<{ id: string; name: string }>;
  /** The run in flight may park a call that waits for approval (a `general` run its conductor can re-dispatch). */
  parkable?: boolean;
  /** The call of the run in flight that parked it (approvals/): the run's stream ends with `parked`, not its result. */
  parked?: { approvalId: string; toolCallId?: string; toolName: string; input: unknown };
  /** The session whose sandboxed files (`/work`) this one works in, instead of a scratch folder of its own. */
  sandboxOf?: string;
}

/** Side effects of the session lifecycle (the VFS lease): called after the store changed. */
export interface SessionHooks {
  onCreate?(rec: SessionRecord): void;
  onShutdown?(rec: SessionRecord): void;
}

export interface SessionStore {
  create(tenant: string, id: string, profile: ProfileSpec, runtimeSessionId?: string, sandboxOf?: string): SessionRecord;
  /** The tenant's session; another tenant's session is reported as unknown (404), never as forbidden. */
  require(tenant: string, id: string): SessionRecord;
  find(tenant: string, id: string): SessionRecord | undefined;
  /**
   * A live (not shut-down) session by id, whatever its tenant. Only for the session MCP endpoint: the worker calls it
   * without a tenant header, and the unguessable session id is what names the session there.
   */
  findLive(id: string): SessionRecord | undefined;
  /** True when the id is taken by a different tenant: such an id can be neither read nor re-created. */
  ownedByOther(tenant: string, id: string): boolean;
  list(tenant: string): SessionRecord[];
  all(): SessionRecord[];
  /** Marks the session `running` and hands back the controller that cancels it; 409 when a run is already going. */
  beginRun(rec: SessionRecord, prompt: string): AbortController;
  finishRun(rec: SessionRecord, outcome: 'ok' | 'error' | 'cancelled'): void;
  shutdown(rec: SessionRecord): void;
}

const MAX_TOMBSTONES = 1000;

export function createSessionStore(now: () => Date = () => new Date(), hooks: SessionHooks = {}): SessionStore {
  const sessions = new Map<string, SessionRecord>();
  const tombstones: string[] = [];

  const find = (tenant: string, id: string) => {
    const rec = sessions.get(id);
    return rec && rec.tenant === tenant ? rec : undefined;
  };

  return {
    create(tenant, id, profile, runtimeSessionId = '', sandboxOf) {
      const at = now().toISOString();
      const rec: SessionRecord = {
        id, tenant, profile: structuredClone(profile), runtime: profile.runtime, status: 'idle', createdAt: at, lastUsedAt: at,
        lastPrompt: '', lastRunStatus: '', runCount: 0, runtimeSessionId, activeRun: undefined, activeRunId: undefined, runToken: undefined,
        ...(sandboxOf ? { sandboxOf } : {}),
      };
      sessions.set(id, rec);
      hooks.onCreate?.(rec);
      return rec;
    },
    require(tenant, id) {
      const rec = find(tenant, id);
      if (!rec) throw notFound(`unknown session: ${id}`);
      return rec;
    },
    find,
    findLive: (id) => {
      const rec = sessions.get(id);
      return rec && rec.status !== 'shutdown' ? rec : undefined;
    },
    ownedByOther: (tenant, id) => {
      const rec = sessions.get(id);
      return rec !== undefined && rec.tenant !== tenant;
    },
    list: (tenant) => [...sessions.values()].filter((s) => s.tenant === tenant).sort((a, b) => a.createdAt.localeCompare(b.createdAt)),
    all: () => [...sessions.values()],
    beginRun(rec, prompt) {
      // checked and set with no await in between, so two concurrent runs cannot both pass
      if (rec.status === 'running') throw conflict('session busy');
      if (rec.status === 'shutdown') throw notFound(`session shut down: ${rec.id}`);
      rec.status = 'running';
      rec.activeRun = new AbortController();
      rec.lastPrompt = prompt;
      rec.lastUsedAt = now().toISOString();
      return rec.activeRun;
    },
    finishRun(rec, outcome) {
      rec.activeRun = undefined;
      rec.activeRunId = undefined;
      rec.runToken = undefined;
      rec.runOutput = undefined;
      rec.runCount++;
      rec.lastRunStatus = outcome;
      rec.lastUsedAt = now().toISOString();
      if (rec.status !== 'shutdown') rec.status = outcome === 'error' ? 'errored' : 'idle';
    },
    shutdown(rec) {
      if (rec.status === 'shutdown') return;
      rec.status = 'shutdown';
      rec.activeRun?.abort(new Error('session shut down'));
      hooks.onShutdown?.(rec);
      tombstones.push(rec.id);
      while (tombstones.length > MAX_TOMBSTONES) {
        const old = sessions.get(tombstones.shift()!);
        if (old?.status === 'shutdown') sessions.delete(old.id);
      }
    },
  };
}

export function toWire(rec: SessionRecord): RunnerSession {
  return {
    id: rec.id, profile: rec.profile.name, runtime: rec.runtime, status: rec.status, createdAt: rec.createdAt, lastUsedAt: rec.lastUsedAt,
    lastPrompt: rec.lastPrompt, lastRunStatus: rec.lastRunStatus, runCount: rec.runCount, runtimeSessionId: rec.runtimeSessionId,
  };
}
