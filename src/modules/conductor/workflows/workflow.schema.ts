import * as v from 'valibot';
import { readOnlyFields } from '../../../shared/strict-body.ts';
import type { Agrees, Same } from '../schema-check.ts';
import type { WireRun } from './plan.ts';
import type { RunSummary } from './workflows.repo.ts';
import type { Definition } from './definitions.repo.ts';
import type { Schedule } from './schedules.repo.ts';

/** Request bodies of `/api/workflows/*` (valibot, as every conductor family). Graph rules live in plan.ts checkGraph. */
export const MAX_NODES = 100;

const NodeId = v.pipe(v.string('id: expected string'), v.regex(/^[A-Za-z0-9_-]{1,64}$/, 'id: 1-64 letters, digits, "_" or "-"'));

export const NodeBody = v.object({
  id: NodeId,
  profile: v.pipe(v.string('profile: expected string'), v.minLength(1, 'profile: a profile name')),
  prompt: v.optional(v.pipe(v.string('prompt: expected string'), v.maxLength(100_000, 'prompt: at most 100000 characters')), ''),
  dependsOn: v.optional(v.pipe(v.array(NodeId, 'dependsOn: expected an array of node ids'), v.maxLength(MAX_NODES, `dependsOn: at most ${MAX_NODES}`)), []),
  onError: v.optional(v.picklist(['pause', 'fail', 'continue'], 'onError: expected "pause", "fail" or "continue"'), 'pause'),
});
export type NodeBody = v.InferOutput<typeof NodeBody>;

const Nodes = v.pipe(v.array(NodeBody, 'nodes: expected an array of nodes'), v.minLength(1, 'nodes: at least one node'), v.maxLength(MAX_NODES, `nodes: at most ${MAX_NODES}`));
const Name = v.pipe(v.string('name: expected string'), v.maxLength(200, 'name: at most 200 characters'));

export const CreateRunBody = v.object({
  name: v.optional(Name),
  definitionId: v.optional(v.string('definitionId: expected string')),
  nodes: v.optional(Nodes),
  input: v.optional(v.unknown()),
  autoStart: v.optional(v.boolean('autoStart: expected boolean'), true),
});
export type CreateRunBody = v.InferOutput<typeof CreateRunBody>;

export const RepairBody = v.object({
  action: v.picklist(['retry_node', 'replace_node', 'add_dependency', 'abort'], 'action: expected retry_node, replace_node, add_dependency or abort'),
  nodeId: v.optional(NodeId),
  node: v.optional(
    v.object({
      profile: v.optional(NodeBody.entries.profile),
      prompt: v.optional(v.pipe(v.string('node.prompt: expected string'), v.maxLength(100_000, 'node.prompt: at most 100000 characters'))),
      dependsOn: v.optional(v.array(NodeId, 'node.dependsOn: expected an array of node ids')),
      onError: v.optional(NodeBody.entries.onError),
    }),
  ),
  dependsOn: v.optional(v.array(NodeId, 'dependsOn: expected an array of node ids')),
});
export type RepairBody = v.InferOutput<typeof RepairBody>;

export const NodeUpdateBody = v.object({
  status: v.string('status: expected one of ok, error, skipped, cancelled'),
  output: v.optional(v.pipe(v.string('output: expected string'), v.maxLength(1_000_000, 'output: at most 1000000 characters'))),
});

export const DefinitionBody = v.object({
  name: v.pipe(Name, v.minLength(1, 'name: required')),
  nodes: Nodes,
});
export type DefinitionBody = v.InferOutput<typeof DefinitionBody>;

/** What a GET answers can be PUT back: `id` and the timestamps are read-only. */
export const UpdateDefinitionBody = v.object({
  ...readOnlyFields('id', 'createdAt', 'updatedAt'),
  name: v.optional(v.pipe(Name, v.minLength(1, 'name: required'))),
  nodes: v.optional(Nodes),
});

export const ScheduleBody = v.object({
  workflowDefinitionId: v.pipe(v.string('workflowDefinitionId: expected string'), v.minLength(1, 'workflowDefinitionId: required')),
  cron: v.pipe(v.string('cron: expected string'), v.minLength(1, 'cron: a cron expression'), v.maxLength(200, 'cron: at most 200 characters')),
  timezone: v.optional(v.pipe(v.string('timezone: expected string'), v.maxLength(100, 'timezone: at most 100 characters')), 'UTC'),
});

/** What the workflow routes answer (plan.ts `WireRun`, workflows.repo.ts `RunSummary`, definitions.repo.ts, schedules.repo.ts). */
const Instant = v.string();
const RunLabel = v.picklist(['pending', 'running', 'paused', 'completed', 'failed', 'cancelled']);

export const WorkflowNodeView = v.object({
  id: v.string(),
  profile: v.string(),
  prompt: v.string(),
  dependsOn: v.array(v.string()),
  onError: v.picklist(['pause', 'fail', 'continue']),
  /** 0 pending, 1 ready, 2 running, 3 ok, 4 error, 5 skipped, 6 cancelled (the label beside it). */
  status: v.number(),
  statusLabel: v.picklist(['pending', 'ready', 'running', 'ok', 'error', 'skipped', 'cancelled']),
  runId: v.nullable(v.string()),
  output: v.nullable(v.string()),
  error: v.nullable(v.string()),
  startedAt: v.nullable(Instant),
  finishedAt: v.nullable(Instant),
});

export const WorkflowRunView = v.object({
  id: v.string(),
  name: v.string(),
  definitionId: v.nullable(v.string()),
  input: v.unknown(),
  /** 0 pending, 1 running, 2 paused, 3 completed, 4 failed, 5 cancelled; create and start answer the label. */
  status: v.union([v.number(), RunLabel]),
  statusLabel: RunLabel,
  nodes: v.array(WorkflowNodeView),
  createdAt: Instant,
  startedAt: v.nullable(Instant),
  finishedAt: v.nullable(Instant),
});
export const WorkflowRunAnswer = v.object({ workflowRun: WorkflowRunView });

export const WorkflowRunSummary = v.object({
  id: v.string(),
  name: v.string(),
  definitionId: v.nullable(v.string()),
  scheduleId: v.nullable(v.string()),
  scheduledFor: v.nullable(Instant),
  status: v.number(),
  statusLabel: RunLabel,
  createdAt: Instant,
  startedAt: v.nullable(Instant),
  finishedAt: v.nullable(Instant),
});

export const DefinitionView = v.object({
  id: v.string(),
  name: v.string(),
  nodes: v.array(v.object({ id: v.string(), profile: v.string(), prompt: v.string(), dependsOn: v.array(v.string()), onError: v.picklist(['pause', 'fail', 'continue']) })),
  createdAt: Instant,
  updatedAt: Instant,
});
export const DefinitionAnswer = v.object({ workflowDefinition: DefinitionView });

export const ScheduleView = v.object({
  id: v.string(),
  workflowDefinitionId: v.string(),
  cron: v.string(),
  timezone: v.string(),
  status: v.picklist(['active', 'paused']),
  nextRunAt: v.nullable(Instant),
  lastFiredAt: v.nullable(Instant),
  createdAt: Instant,
  updatedAt: Instant,
});
export const ScheduleAnswer = v.object({ workflowSchedule: ScheduleView });

const Param = (description: string) => v.optional(v.pipe(v.string(), v.description(description)));
export const WorkflowPageQuery = v.object({ limit: Param('How many items at most (200 by default and at most)'), offset: Param('How many items to skip') });
export const WorkflowRunsQuery = v.object({
  ...WorkflowPageQuery.entries,
  status: Param('Only runs in this status: 0-5 or its label (pending, running, paused, completed, failed, cancelled)'),
  name: Param('Only runs of this name'),
  scheduleId: Param('Only runs this schedule started'),
});
export const PlanStreamQuery = v.object({ lastEventId: Param('Resume after this event id (as the Last-Event-ID header)') });

/** The schemas above say what the code answers (schema-check.ts). */
export type WorkflowAnswersChecked = [
  Agrees<Same<v.InferOutput<typeof WorkflowRunView>, WireRun>>,
  Agrees<Same<v.InferOutput<typeof WorkflowRunSummary>, RunSummary>>,
  Agrees<Same<v.InferOutput<typeof DefinitionView>, Definition>>,
  Agrees<Same<v.InferOutput<typeof ScheduleView>, Schedule>>,
];
