import type { AgentsTables } from './tables/agents.ts';
import type { ApprovalTables } from './tables/approvals.ts';
import type { AutomationTables } from './tables/automations.ts';
import type { CliTables } from './tables/cli.ts';
import type { ConductorTables } from './tables/conductor.ts';
import type { KitTables } from './tables/kits.ts';
import type { MemoryTables } from './tables/memory.ts';
import type { PublishingTables } from './tables/publishing.ts';
import type { WorkflowTables } from './tables/workflows.ts';

/**
 * Table types for Kysely, one file per area under tables/ (one interface per table; wire shapes live in the modules).
 * `DB` is every table of the database.
 */
export type * from './tables/agents.ts';
export type * from './tables/approvals.ts';
export type * from './tables/automations.ts';
export type * from './tables/cli.ts';
export type * from './tables/conductor.ts';
export type * from './tables/kits.ts';
export type * from './tables/memory.ts';
export type * from './tables/publishing.ts';
export type * from './tables/workflows.ts';

export interface DB extends ConductorTables, AgentsTables, CliTables, AutomationTables, PublishingTables, KitTables, WorkflowTables, MemoryTables, ApprovalTables {}
