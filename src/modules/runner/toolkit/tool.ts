import { z } from 'zod';
import type { RunEvent } from '../../../contracts/run-event.ts';
import type { PoolSpec, ToolSpec } from '../../../contracts/runner.wire.ts';
import type { RunCallbacksClient } from '../../../contracts/run-callbacks.client.ts';
import type { MemoryClient } from '../../../contracts/memory.client.ts';
import type { ToolName } from '../../../contracts/toolkit.ts';
import type { SessionRecord } from '../sessions/sessions.store.ts';
import type { VfsView } from '../vfs/index.ts';
import type { CommandRunner } from '../substrates/process/commands.ts';
import type { SandboxLimits } from '../../../contracts/sandbox-limits.ts';

/**
 * What a platform tool is: a name, a zod input schema (validated here, published as JSON Schema in its spec), where
 * its effects land (`scope`), the permission it exercises (`capability`), and `run`. A tool reports failure by
 * throwing; the toolkit turns that into `{ok: false, value: {error}}` for the model, never into an HTTP error.
 */
export interface ToolContext {
  session: SessionRecord;
  /** The session's VirtualFS; throws when the profile's fs policy is malformed, so only file tools ask for it. */
  vfs(): VfsView;
  /** The session tenant's pools (membership, fs patterns). */
  pools: readonly PoolSpec[];
  /** How tools reach the conductor (delegate, notify); undefined when this runner has no conductor configured. */
  conductor: RunCallbacksClient | undefined;
  /** How the memory tools reach the session's memory stores (through the conductor, with the run token). */
  memory: MemoryClient | undefined;
  /** Where `run_command` runs commands (the sandbox). */
  commands: CommandRunner;
  /** The session's effective sandbox limits (its profile's over the operator's defaults, held to the ceilings). */
  limits: SandboxLimits;
  /** Aborted when the caller goes away or the session's run ends. */
  signal: AbortSignal;
  /** Adds an event to the session's run in flight, if any (a running command's output). */
  emit(event: RunEvent): void;
}

export interface ToolDef<S extends z.ZodType = z.ZodType> {
  name: ToolName;
  description: string;
  input: S;
  scope: ToolSpec['scope'];
  capability: string;
  run(input: z.output<S>, ctx: ToolContext): Promise<unknown>;
  /** What the model reads back over MCP; JSON of the value by default. */
  text?(value: never): string;
}

/** Keeps each tool's `run` typed by its own schema while the catalog holds them all as one type. */
export function defineTool<S extends z.ZodType>(def: ToolDef<S>): ToolDef {
  return def as unknown as ToolDef;
}

export { ToolFailure } from './tool-failure.ts';

export function specOf(def: ToolDef): ToolSpec {
  const { $schema: _drop, ...inputSchema } = z.toJSONSchema(def.input, { io: 'input' }) as Record<string, unknown>;
  return { name: def.name, description: def.description, inputSchema, scope: def.scope, capability: def.capability };
}

/** `field: problem` for the first zod issue, matching the wording of our 400s. */
export function describeZodIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  const path = issue?.path.length ? issue.path.join('.') : 'input';
  return `${path}: ${issue?.message ?? 'invalid'}`;
}
