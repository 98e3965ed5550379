import * as v from 'valibot';
import { Metadata, SessionAgentObject, SessionAgentParams } from '../agents/agent.schema.ts';
import { EnvironmentParam, EnvironmentResource } from '../environments/environment.schema.ts';
import { cursorPageOf, cursorQuery, deletedOf, OutputText, StringMap, SummaryText, Timestamp, TokenUsage, type Describes } from '../wire.schema.ts';
import type { Subagent } from '../subagents/subagents.repo.ts';
import type { Turn } from '../wire.ts';
import type { SessionArtifact } from './artifacts.service.ts';

/** Request bodies of sessions (spec §3.2, §3.3): creation, metadata update and the input events. */
export const InputContent = v.variant('type', [
  v.object({ type: v.literal('input_text'), text: v.string() }),
  v.object({ type: v.literal('input_image'), image_url: v.string() }),
]);
export type InputContent = v.InferOutput<typeof InputContent>;

export const InputMessage = v.object({
  role: v.literal('user'),
  content: v.pipe(v.array(InputContent), v.minLength(1, 'at least one content part')),
  type: v.optional(v.literal('message')),
});
export type InputMessage = v.InferOutput<typeof InputMessage>;

export const SessionCreateParams = v.object({
  environment: EnvironmentParam,
  agent_id: v.optional(v.nullable(v.pipe(v.string(), v.minLength(1)))),
  agent: v.optional(v.nullable(SessionAgentParams)),
  input: v.optional(v.nullable(v.union([v.pipe(v.string(), v.minLength(1, 'a non-empty string')), v.pipe(v.array(InputMessage), v.minLength(1, 'at least one message'))]))),
  metadata: v.optional(v.nullable(Metadata)),
  stream: v.optional(v.nullable(v.boolean())),
  vault_ids: v.optional(v.nullable(v.array(v.string()))),
});
export type SessionCreateParams = v.InferOutput<typeof SessionCreateParams>;

export const SessionUpdateParams = v.object({ metadata: v.optional(v.nullable(Metadata)) });

const ToolApprovalEntries = {
  id: v.pipe(v.string(), v.minLength(1)),
  approve: v.boolean(),
  message: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(4000, 'at most 4000 characters')))),
};

export const InputEvent = v.variant('type', [
  v.object({ type: v.literal('agent.session.input.message'), input: v.pipe(v.array(InputMessage), v.minLength(1, 'at least one message')) }),
  v.object({ type: v.literal('agent.session.input.cancel') }),
  v.object({
    type: v.literal('agent.session.input.tool_result'),
    turn_id: v.pipe(v.string(), v.minLength(1)),
    call_id: v.pipe(v.string(), v.minLength(1)),
    success: v.boolean(),
    output: v.optional(v.nullable(v.union([v.string(), v.array(InputContent)]))),
    error: v.optional(v.nullable(v.string())),
  }),
  /**
   * svc extension: the decision on a `tool_approval` required action (a built-in tool under `always_ask`), typed
   * `agent.session.input.tool_approval` like the other input events, or `tool_approval` like the required action it
   * answers (normalised to the first by `canonicalInput`).
   */
  v.object({ type: v.literal('agent.session.input.tool_approval'), ...ToolApprovalEntries }),
  v.object({ type: v.literal('tool_approval'), ...ToolApprovalEntries }),
]);
type ParsedInputEvent = v.InferOutput<typeof InputEvent>;
export type InputEvent = Exclude<ParsedInputEvent, { type: 'tool_approval' }>;

/** One spelling per input event: the short `tool_approval` becomes `agent.session.input.tool_approval`. */
export function canonicalInput(ev: ParsedInputEvent): InputEvent {
  return ev.type === 'tool_approval' ? { ...ev, type: 'agent.session.input.tool_approval' } : ev;
}

export const EventsBody = v.object({ events: v.pipe(v.array(InputEvent), v.minLength(1, 'a non-empty array of input events')) });

/** A string input is one user message with one text part. */
export function inputMessages(input: string | InputMessage[]): InputMessage[] {
  return typeof input === 'string' ? [{ role: 'user', content: [{ type: 'input_text', text: input }] }] : input;
}

// ── responses (spec §2.4-2.8, §5) ───────────────────────────────────────────────────────────────────────────────────

const RequiredAction = v.variant('type', [
  v.object({ type: v.literal('function_call'), name: v.string(), call_id: v.string(), arguments: v.unknown(), turn_id: v.string() }),
  v.object({ type: v.literal('environment_connection'), environment_id: v.string() }),
  // svc extension: a call to an `always_ask` tool, the session's own or one of its subagents' (`subagent_id`)
  v.object({ type: v.literal('tool_approval'), id: v.string(), tool_name: v.string(), arguments: v.unknown(), turn_id: v.string(), subagent_id: v.optional(v.string()) }),
]);

export const SessionObject = v.object({
  id: v.string(),
  object: v.literal('agent.session'),
  agent: SessionAgentObject,
  created_at: Timestamp,
  environment: EnvironmentResource,
  error: v.nullable(v.pipe(v.string(), v.description('Why the session failed'))),
  last_active_at: Timestamp,
  metadata: StringMap,
  required_actions: v.array(RequiredAction),
  status: v.picklist(['idle', 'in_progress', 'requires_action', 'failed']),
  usage: v.nullable(TokenUsage),
  vault_ids: v.array(v.string()),
});
export const SessionPage = cursorPageOf(SessionObject);
export const SessionDeleted = deletedOf('agent.session.deleted');

export const TurnObject = v.object({
  id: v.string(),
  object: v.literal('agent.session.turn'),
  agent_id: v.string(),
  completed_at: v.nullable(Timestamp),
  created_at: Timestamp,
  error: v.nullable(v.object({ code: v.string(), message: v.string() })),
  session_id: v.string(),
  started_at: v.nullable(Timestamp),
  status: v.picklist(['queued', 'in_progress', 'waiting', 'completed', 'failed', 'cancelled']),
  subagent_id: v.nullable(v.pipe(v.string(), v.description("The subagent whose turn it is; null for the session's own turns"))),
  usage: v.nullable(TokenUsage),
});
export const TurnPage = cursorPageOf(TurnObject);

const CallStatus = v.picklist(['in_progress', 'completed', 'failed', 'incomplete']);
const ItemStatus = v.picklist(['in_progress', 'completed', 'incomplete']);
const item = { id: v.string(), turn_id: v.string() };
const subagentCall = { ...item, content: v.array(OutputText), status: CallStatus };

/** An item of a session's conversation (no `object`; `type` says which). */
export const SessionItem = v.variant('type', [
  v.object({
    type: v.literal('message'),
    ...item,
    role: v.picklist(['user', 'assistant']),
    content: v.array(v.variant('type', [InputContent.options[0], InputContent.options[1], OutputText])),
    phase: v.nullable(v.picklist(['commentary', 'final_answer'])),
    status: ItemStatus,
  }),
  v.object({ type: v.literal('reasoning'), ...item, status: v.nullable(ItemStatus), summary: v.array(SummaryText) }),
  v.object({ type: v.literal('function_call'), ...item, call_id: v.string(), name: v.string(), arguments: v.unknown(), status: CallStatus }),
  v.object({
    type: v.literal('function_call_output'),
    ...item,
    call_id: v.string(),
    output: v.nullable(v.union([v.string(), v.array(InputContent)])),
    error: v.nullable(v.string()),
    status: CallStatus,
  }),
  v.object({ type: v.literal('agent_message'), ...item, content: v.array(OutputText), sender_agent_id: v.string(), recipient_agent_id: v.string() }),
  v.object({ type: v.literal('mcp_call'), ...item, server_label: v.string(), name: v.string(), arguments: v.unknown(), output: v.unknown(), error: v.unknown(), status: CallStatus }),
  v.object({ type: v.literal('create_subagent_call'), ...subagentCall, agent_id: v.string(), model: v.nullable(v.string()), reasoning_effort: v.nullable(v.string()) }),
  v.object({ type: v.literal('send_subagent_input_call'), ...subagentCall, sender_agent_id: v.string(), recipient_agent_id: v.string() }),
]);
export const SessionItemPage = cursorPageOf(SessionItem);

export const SubagentObject = v.object({
  id: v.string(),
  object: v.literal('agent.session.subagent'),
  closed_at: v.nullable(Timestamp),
  instructions: v.nullable(v.array(OutputText)),
  name: v.nullable(v.string()),
  opened_at: Timestamp,
  parent_agent_id: v.string(),
  session_id: v.string(),
  status: v.picklist(['active', 'closed']),
});
export const SubagentPage = cursorPageOf(SubagentObject);

export const ArtifactObject = v.object({
  id: v.string(),
  object: v.literal('agent.session.artifact'),
  created_at: Timestamp,
  environment_id: v.string(),
  path: v.string(),
  session_id: v.string(),
  size_bytes: v.number(),
  turn_id: v.string(),
});
export const ArtifactPage = cursorPageOf(ArtifactObject);
export const ArtifactDeleted = deletedOf('agent.session.artifact.deleted');

/** One event of a session's stream (SSE `data:`; `event:` is its `type`, `id:` its `event_id`). */
const SESSION_SNAPSHOTS = ['agent.session.created', 'agent.session.in_progress', 'agent.session.requires_action', 'agent.session.idle', 'agent.session.failed'] as const;
const ENVIRONMENT_EVENTS = [
  'agent.session.environment.pending',
  'agent.session.environment.ready',
  'agent.session.environment.connected',
  'agent.session.environment.disconnected',
  'agent.session.environment.failed',
] as const;
const event = { event_id: v.string() };
const inTurn = { ...event, session_id: v.string(), turn_id: v.nullable(v.string()) };
const inItem = { ...inTurn, item_id: v.string(), output_index: v.number() };
const { session_id: _sessionId, ...subagentEntries } = SubagentObject.entries;

export const SessionEvent = v.variant('type', [
  v.object({ type: v.picklist(SESSION_SNAPSHOTS), ...event, session: SessionObject }),
  v.object({
    type: v.picklist(ENVIRONMENT_EVENTS),
    ...inTurn,
    environment: v.object({
      id: v.string(),
      type: v.string(),
      status: v.picklist(['pending', 'ready', 'connected', 'disconnected', 'failed']),
      error: v.nullable(v.object({ code: v.string(), message: v.string(), type: v.string() })),
    }),
  }),
  v.object({ type: v.picklist(['agent.session.subagent.created', 'agent.session.subagent.active', 'agent.session.subagent.closed']), ...event, subagent: v.object(subagentEntries) }),
  v.object({ type: v.picklist(['agent.session.turn.created', 'agent.session.turn.in_progress']), ...event, session_id: v.string(), turn_id: v.string(), turn: TurnObject }),
  v.object({
    type: v.picklist(['agent.session.turn.completed', 'agent.session.turn.failed', 'agent.session.turn.cancelled']),
    ...event,
    session_id: v.string(),
    turn_id: v.string(),
    turn: TurnObject,
    usage: v.nullable(TokenUsage),
  }),
  v.object({ type: v.literal('agent.session.turn.item.added'), ...inTurn, item: SessionItem, output_index: v.nullable(v.number()) }),
  v.object({ type: v.literal('agent.session.turn.item.done'), ...inTurn, item: SessionItem, output_index: v.number() }),
  v.object({ type: v.picklist(['agent.session.turn.content_part.added', 'agent.session.turn.content_part.done']), ...inItem, content_index: v.number(), part: OutputText }),
  v.object({ type: v.literal('agent.session.turn.output_text.delta'), ...inItem, content_index: v.number(), delta: v.string() }),
  v.object({ type: v.literal('agent.session.turn.output_text.done'), ...inItem, content_index: v.number(), text: v.string() }),
  v.object({ type: v.literal('agent.session.turn.reasoning_summary_part.added'), ...inItem, summary_index: v.number(), part: SummaryText }),
  v.object({ type: v.literal('agent.session.turn.reasoning_summary_part.done'), ...inItem, summary_index: v.number(), part: SummaryText, status: v.nullable(v.literal('incomplete')) }),
  v.object({ type: v.literal('agent.session.turn.reasoning_summary_text.delta'), ...inItem, summary_index: v.number(), delta: v.string() }),
  v.object({ type: v.literal('agent.session.turn.reasoning_summary_text.done'), ...inItem, summary_index: v.number(), text: v.string() }),
  v.object({ type: v.literal('agent.output.command_execution_output.delta'), ...inItem, delta: v.string() }),
  v.object({
    type: v.literal('error'),
    ...event,
    session_id: v.string(),
    error: v.object({ code: v.nullable(v.string()), message: v.string(), param: v.nullable(v.string()), type: v.string() }),
  }),
]);

export const SessionListQuery = cursorQuery({ agent_id: v.optional(v.pipe(v.string(), v.description('Only the sessions of this saved agent'))) });
export const ArtifactListQuery = cursorQuery({ environment_id: v.optional(v.pipe(v.string(), v.description('Only the artifacts of this environment'))) });

export type CheckedTurn = Describes<typeof TurnObject, Turn>;
export type CheckedSubagent = Describes<typeof SubagentObject, Subagent>;
export type CheckedArtifact = Describes<typeof ArtifactObject, SessionArtifact>;
