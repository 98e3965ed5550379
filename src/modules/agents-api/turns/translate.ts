import type { RunEvent } from '../../../contracts/run-event.ts';
import { randomId } from '../../../shared/ids.ts';
import type { SessionEventBody, SessionItem, TokenUsage } from '../wire.ts';

/**
 * Translates the RunEvents of a turn's runs into agents-API output events (spec §5.3): streamed `assistant` deltas
 * become one assistant message (item.added → content_part.added → output_text.delta* → output_text.done →
 * content_part.done → item.done), and server-executed tools (the session toolkit, MCP servers) become `mcp_call`
 * items (a running command's output arrives as `agent.output.command_execution_output.delta` on its item); reasoning
 * summaries become `reasoning` items with their summary parts. Function tools are announced by the function-tool endpoint instead (it knows the call id the client
 * answers), so their tool events are skipped here. One translator lives as long as its turn; output indices count
 * across the turn's runs.
 */
export interface TurnTranslator {
  handle(event: RunEvent): SessionEventBody[];
  /** Ends the open assistant message (before a function call is announced, and at the end of a run). */
  closeMessage(status?: 'completed' | 'incomplete'): SessionEventBody[];
  /** Ends whatever is still open when the turn ends. */
  finish(outcome: 'completed' | 'failed' | 'cancelled'): SessionEventBody[];
  nextOutputIndex(): number;
  usage(): TokenUsage | null;
}

export const TOOLKIT_LABEL = 'svc_toolkit';

interface OpenReasoning {
  id: string;
  outputIndex: number;
  /** The summary parts so far; the last one is open until the next part, text, a tool call or the run's end. */
  parts: string[];
  partId: string | undefined;
  partClosed?: number;
}

interface OpenMessage {
  id: string;
  outputIndex: number;
  text: string;
}

export function emptyUsage(): TokenUsage {
  return { input_tokens: 0, input_tokens_details: { cached_tokens: 0 }, output_tokens: 0, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 0 };
}

export function addUsage(a: TokenUsage | null, b: TokenUsage | null): TokenUsage | null {
  if (!a) return b && structuredClone(b);
  if (!b) return a;
  return {
    input_tokens: a.input_tokens + b.input_tokens,
    input_tokens_details: { cached_tokens: a.input_tokens_details.cached_tokens + b.input_tokens_details.cached_tokens },
    output_tokens: a.output_tokens + b.output_tokens,
    output_tokens_details: { reasoning_tokens: a.output_tokens_details.reasoning_tokens + b.output_tokens_details.reasoning_tokens },
    total_tokens: a.total_tokens + b.total_tokens,
  };
}

/** `<server>__<tool>` names come from MCP servers; anything else is a tool of the session toolkit. */
export function splitToolName(name: string): { server_label: string; name: string } {
  const i = name.indexOf('__');
  return i > 0 ? { server_label: name.slice(0, i), name: name.slice(i + 2) } : { server_label: TOOLKIT_LABEL, name };
}

const argsText = (input: unknown) => (typeof input === 'string' ? input : JSON.stringify(input ?? {}));

export function createTurnTranslator(opts: { sessionId: string; turnId: string; isFunctionTool(name: string): boolean }): TurnTranslator {
  const base = { session_id: opts.sessionId, turn_id: opts.turnId };
  let outputIndex = 0;
  let open: OpenMessage | undefined;
  let sawDeltas = false;
  let usage: TokenUsage | null = null;
  const calls = new Map<string, { item: SessionItem; outputIndex: number }>();
  let reasoning: OpenReasoning | undefined;
  /** Command output that came before its call was announced (the runner and the worker report on separate paths). */
  let earlyOutput: string[] = [];

  const message = (m: OpenMessage, status: string): SessionItem => ({
    type: 'message',
    id: m.id,
    role: 'assistant',
    content: status === 'in_progress' ? [] : [{ type: 'output_text', text: m.text }],
    phase: null,
    status,
    turn_id: opts.turnId,
  });

  function openMessage(): SessionEventBody[] {
    open = { id: `msg_${randomId(24)}`, outputIndex: outputIndex++, text: '' };
    const at = { ...base, item_id: open.id, output_index: open.outputIndex, content_index: 0 };
    return [
      { type: 'agent.session.turn.item.added', ...base, item: message(open, 'in_progress'), output_index: open.outputIndex },
      { type: 'agent.session.turn.content_part.added', ...at, part: { type: 'output_text', text: '' } },
    ];
  }

  function delta(text: string): SessionEventBody[] {
    const out = open ? [] : openMessage();
    open!.text += text;
    out.push({ type: 'agent.session.turn.output_text.delta', ...base, item_id: open!.id, output_index: open!.outputIndex, content_index: 0, delta: text });
    return out;
  }

  function closeMessage(status: 'completed' | 'incomplete' = 'completed'): SessionEventBody[] {
    if (!open) return [];
    const m = open;
    open = undefined;
    const at = { ...base, item_id: m.id, output_index: m.outputIndex, content_index: 0 };
    return [
      { type: 'agent.session.turn.output_text.done', ...at, text: m.text },
      { type: 'agent.session.turn.content_part.done', ...at, part: { type: 'output_text', text: m.text } },
      { type: 'agent.session.turn.item.done', ...base, item: message(m, status), output_index: m.outputIndex },
    ];
  }

  /** Reasoning summary deltas (spec §5.3): item.added → per part: part.added → text.delta* → text.done → part.done → item.done. */
  function reasoningDelta(e: RunEvent): SessionEventBody[] {
    const out: SessionEventBody[] = closeMessage();
    if (!reasoning) {
      reasoning = { id: `rs_${randomId(24)}`, outputIndex: outputIndex++, parts: [], partId: undefined };
      out.push({ type: 'agent.session.turn.item.added', ...base, item: reasoningItem(reasoning, 'in_progress'), output_index: reasoning.outputIndex });
    }
    const r = reasoning;
    const at = () => ({ ...base, item_id: r.id, output_index: r.outputIndex, summary_index: r.parts.length - 1 });
    if (r.parts.length === 0 || (e.partId !== undefined && e.partId !== r.partId)) {
      out.push(...closePart(r));
      r.parts.push('');
      r.partId = e.partId;
      out.push({ type: 'agent.session.turn.reasoning_summary_part.added', ...at(), part: { type: 'summary_text', text: '' } });
    }
    r.parts[r.parts.length - 1] += e.message ?? '';
    out.push({ type: 'agent.session.turn.reasoning_summary_text.delta', ...at(), delta: e.message ?? '' });
    return out;
  }

  function closePart(r: OpenReasoning, status: 'incomplete' | null = null): SessionEventBody[] {
    if (r.parts.length === 0 || r.partClosed === r.parts.length) return [];
    r.partClosed = r.parts.length;
    const text = r.parts[r.parts.length - 1];
    const at = { ...base, item_id: r.id, output_index: r.outputIndex, summary_index: r.parts.length - 1 };
    return [
      { type: 'agent.session.turn.reasoning_summary_text.done', ...at, text },
      { type: 'agent.session.turn.reasoning_summary_part.done', ...at, part: { type: 'summary_text', text }, status },
    ];
  }

  function closeReasoning(status: 'completed' | 'incomplete' = 'completed'): SessionEventBody[] {
    if (!reasoning) return [];
    const r = reasoning;
    reasoning = undefined;
    return [...closePart(r, status === 'completed' ? null : 'incomplete'), { type: 'agent.session.turn.item.done', ...base, item: reasoningItem(r, status), output_index: r.outputIndex }];
  }

  const reasoningItem = (r: OpenReasoning, status: string): SessionItem => ({
    type: 'reasoning',
    id: r.id,
    status,
    summary: status === 'in_progress' ? [] : r.parts.map((text) => ({ type: 'summary_text', text })),
    turn_id: opts.turnId,
  });

  /** Output of a running command: a delta on its call's item (the latest open call of that tool). */
  function commandOutput(e: RunEvent): SessionEventBody[] {
    if (!e.message) return [];
    const open = [...calls.values()].filter((c) => c.item.name === e.toolName).at(-1);
    if (!open) {
      earlyOutput.push(e.message);
      return [];
    }
    return [{ type: 'agent.output.command_execution_output.delta', ...base, item_id: open.item.id, output_index: open.outputIndex, delta: e.message }];
  }

  function toolCall(e: RunEvent): SessionEventBody[] {
    const out = [...closeReasoning(), ...closeMessage()];
    if (!e.toolName || opts.isFunctionTool(e.toolName)) return out;
    const item: SessionItem = {
      type: 'mcp_call',
      id: `mcp_${randomId(24)}`,
      ...splitToolName(e.toolName),
      arguments: argsText(e.input),
      output: null,
      error: null,
      status: 'in_progress',
      turn_id: opts.turnId,
    };
    const index = outputIndex++;
    calls.set(e.toolCallId ?? item.id, { item, outputIndex: index });
    out.push({ type: 'agent.session.turn.item.added', ...base, item, output_index: index });
    const early = earlyOutput;
    earlyOutput = [];
    for (const text of early) out.push(...commandOutput({ ...e, type: 'tool_output', message: text }));
    return out;
  }

  function toolResult(e: RunEvent): SessionEventBody[] {
    if (!e.toolName || opts.isFunctionTool(e.toolName)) return [];
    const call = calls.get(e.toolCallId ?? '');
    if (!call) return [];
    calls.delete(e.toolCallId ?? '');
    const item = e.isError
      ? { ...call.item, error: e.output ?? 'tool failed', status: 'failed' }
      : { ...call.item, output: e.output ?? null, status: 'completed' };
    return [{ type: 'agent.session.turn.item.done', ...base, item, output_index: call.outputIndex }];
  }

  return {
    handle(e) {
      switch (e.type) {
        case 'assistant':
          if (e.delta) {
            sawDeltas = true;
            return e.message ? [...closeReasoning(), ...delta(e.message)] : [];
          }
          // a runtime that does not stream sends only the whole text; after deltas it repeats what was said
          if (sawDeltas || !e.message) return [];
          return [...closeReasoning(), ...delta(e.message), ...closeMessage()];
        case 'thinking':
          return reasoningDelta(e);
        case 'tool_output':
          return commandOutput(e);
        case 'tool_call':
          return toolCall(e);
        case 'tool_result':
          return toolResult(e);
        case 'usage':
          if (e.usage) {
            const u = e.usage;
            usage = addUsage(usage, {
              input_tokens: u.inputTokens,
              input_tokens_details: { cached_tokens: u.cacheReadTokens ?? 0 },
              output_tokens: u.outputTokens,
              output_tokens_details: { reasoning_tokens: 0 },
              total_tokens: u.inputTokens + u.outputTokens,
            });
          }
          return [];
        case 'result':
        case 'error':
          sawDeltas = false; // the next run of the turn starts afresh
          earlyOutput = [];
          return [...closeReasoning(e.type === 'result' ? 'completed' : 'incomplete'), ...closeMessage(e.type === 'result' ? 'completed' : 'incomplete')];
        default:
          return [];
      }
    },
    closeMessage: (status) => [...closeReasoning(status), ...closeMessage(status)],
    finish(outcome) {
      const out = [...closeReasoning(outcome === 'completed' ? 'completed' : 'incomplete'), ...closeMessage(outcome === 'completed' ? 'completed' : 'incomplete')];
      for (const call of calls.values()) {
        out.push({ type: 'agent.session.turn.item.done', ...base, item: { ...call.item, status: 'incomplete' }, output_index: call.outputIndex });
      }
      calls.clear();
      return out;
    },
    nextOutputIndex: () => outputIndex++,
    usage: () => usage,
  };
}
