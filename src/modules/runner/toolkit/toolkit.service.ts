import type { RunEvent } from '../../../contracts/run-event.ts';
import type { PoolSpec, ToolResult, ToolSpec } from '../../../contracts/runner.wire.ts';
import type { RunCallbacksClient } from '../../../contracts/run-callbacks.client.ts';
import type { MemoryClient } from '../../../contracts/memory.client.ts';
import { selectTools, TOOL_NAMES } from '../../../contracts/toolkit.ts';
import { describeError, forbidden, notFound } from '../../../shared/errors.ts';
import { createLogger } from '../../../shared/log.ts';
import type { Registry } from '../registry/registry.store.ts';
import type { SessionRecord } from '../sessions/sessions.store.ts';
import { VfsError, type VfsManager } from '../vfs/index.ts';
import type { CommandRunner } from '../substrates/process/commands.ts';
import { DEFAULT_LIMITS, effectiveLimits, DEFAULT_CEILINGS, type SandboxLimits } from '../../../contracts/sandbox-limits.ts';
import type { ToolContext, ToolDef } from './tool.ts';
import { ToolFailure } from './tool-failure.ts';
import { gate } from './gate.ts';
import { PARKED_MARK } from '../../../contracts/approvals.ts';
import type { Approvals } from '../approvals/index.ts';

/**
 * The runner's platform toolkit: the catalog of tools, the profile's scope over it (profile `tools` selectors, see
 * contracts/toolkit.ts), and one invoke path shared by the HTTP invoke route and the session MCP server, so both
 * refuse, validate and fail alike.
 */
export interface Toolkit {
  names(): string[];
  specs(): Promise<ToolSpec[]>;
  /** The tools the session's profile may use, in catalog order. */
  scoped(session: SessionRecord): Promise<ToolDef[]>;
  scopedSpecs(session: SessionRecord): Promise<ToolSpec[]>;
  /**
   * Throws 404 for an unknown tool and 403 for one outside the profile's scope; a failing tool is `ok: false`.
   * `platform`: the conductor's own call (no model's), which the permission gate lets pass. `approved`: a person
   * already approved this call (a parked run resumed): the gate does not ask again.
   */
  invoke(session: SessionRecord, toolName: string, input: unknown, signal: AbortSignal, emit?: (event: RunEvent) => void, opts?: { platform?: boolean; approved?: boolean }): Promise<{ def: ToolDef; result: ToolResult }>;
}

export interface ToolkitDeps {
  vfs: VfsManager;
  pools: Registry<PoolSpec>;
  conductor: RunCallbacksClient | undefined;
  /** How the memory tools reach the conductor's memory stores (with the run token); undefined without a conductor. */
  memory: MemoryClient | undefined;
  commands: CommandRunner;
  /** A session's effective sandbox limits (limits/): the operator's defaults when absent. */
  limitsOf?: (session: SessionRecord) => SandboxLimits;
  /** Where a call under an `ask` policy waits for a person (absent: such calls are refused). */
  approvals?: Approvals;
}

const log = createLogger('runner:toolkit');
// the catalog (tool definitions and their zod schemas) loads with the first tool listed or called
let catalog: Promise<typeof import('./catalog.ts')> | undefined;
const loadCatalog = () => (catalog ??= import('./catalog.ts'));

export function outOfScopeMessage(toolName: string, profile: string): string {
  return `tool ${toolName} is not in the scope of profile ${profile}`;
}

export function createToolkit(deps: ToolkitDeps): Toolkit {
  const scoped = async (session: SessionRecord) => {
    const allowed = selectTools(session.profile.tools, Boolean(session.profile.memoryStores?.length));
    return (await loadCatalog()).TOOLS.filter((t) => allowed.has(t.name));
  };

  return {
    names: () => [...TOOL_NAMES],
    specs: async () => (await loadCatalog()).SPECS,
    scoped,
    scopedSpecs: async (session) => {
      const names = new Set((await scoped(session)).map((t) => t.name as string));
      return (await loadCatalog()).SPECS.filter((s) => names.has(s.name));
    },
    async invoke(session, toolName, input, signal, emit, opts = {}) {
      const { BY_NAME, describeZodIssue } = await loadCatalog();
      const def = BY_NAME.get(toolName);
      if (!def) throw notFound(`unknown tool: ${toolName}`);
      if (!(await scoped(session)).includes(def)) throw forbidden(outOfScopeMessage(toolName, session.profile.name));
      let parsed = def.input.safeParse(input ?? {});
      if (!parsed.success) return { def, result: { ok: false, value: { error: describeZodIssue(parsed.error) } } };
      // the profile's permission policy: the gate every toolkit call passes, whichever runtime made it (the platform's
      // own calls, flagged by the conductor, are no model's: they pass); an `ask` call of a parkable run parks it
      const gated = opts.platform
        ? ({ allowed: true, input: parsed.data } as const)
        : await gate(deps.approvals, session, { identity: toolName, name: toolName, input: parsed.data }, signal, { park: true, ...(opts.approved ? { approved: true } : {}) });
      if (!gated.allowed) return { def, result: { ok: false, value: { error: gated.error, ...(gated.parked ? { [PARKED_MARK]: gated.parked } : {}) } } };
      if (gated.input !== parsed.data) {
        parsed = def.input.safeParse(gated.input);
        if (!parsed.success) return { def, result: { ok: false, value: { error: `the approved input is invalid: ${describeZodIssue(parsed.error)}` } } };
      }
      const pools = deps.pools.list(session.tenant);
      const ctx: ToolContext = {
        session,
        vfs: () => deps.vfs.view(session, pools),
        pools,
        conductor: deps.conductor,
        memory: deps.memory,
        commands: deps.commands,
        limits: deps.limitsOf?.(session) ?? effectiveLimits({ defaults: DEFAULT_LIMITS }, DEFAULT_CEILINGS, session.profile.limits),
        // a tool call ends with its caller or with the session's run, whichever goes first
        signal: session.activeRun ? AbortSignal.any([signal, session.activeRun.signal]) : signal,
        // what the tool reports while it runs goes to the caller that asked for it, else to the session's run in flight
        emit: emit ?? ((event) => session.runOutput?.(event)),
      };
      try {
        return { def, result: { ok: true, value: await def.run(parsed.data, ctx) } };
      } catch (err) {
        if (!(err instanceof ToolFailure) && !(err instanceof VfsError)) log.warn('tool failed', { tool: toolName, sessionId: session.id, error: describeError(err) });
        const details = err instanceof ToolFailure ? err.details : {};
        return { def, result: { ok: false, value: { error: describeError(err), ...details } } };
      }
    },
  };
}
