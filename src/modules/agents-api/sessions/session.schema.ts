import * as v from 'valibot';
import { Metadata, SessionAgentParams } from '../agents/agent.schema.ts';
import { EnvironmentParam } from '../environments/environment.schema.ts';

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
