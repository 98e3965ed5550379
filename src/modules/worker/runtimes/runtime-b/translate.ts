import type { ThreadEvent, ThreadItem, Usage as CodexUsage } from '@openai/codex-sdk';
import { runEvent, type RunEvent, type Usage } from '../../../../contracts/run-event.ts';
import { eventToolName, type McpServerEntry } from '../sdk/mcp.ts';
import type { CodexTotals } from './rollout.ts';

/**
 * Codex thread events → RunEvents (RUNTIMES.md §3 "Thread events"). Codex has no text streaming: each whole
 * `agent_message` item is sent as one assistant delta, and the final assistant event joins them. Tool items
 * (commands, MCP calls, file changes, web searches) give tool_call on start and tool_result on completion. Usage is
 * cumulative for the whole thread, so the per-turn usage is the difference from the totals before this turn.
 * Top-level `error` events are also used for non-fatal notices ("Reconnecting…"): only `turn.failed` ends the run.
 */
export function turnUsage(total: CodexUsage, before: CodexTotals): Usage {
  const diff = (now: number | undefined, then: number) => Math.max(0, (now ?? 0) - then);
  return {
    inputTokens: diff(total.input_tokens, before.input_tokens),
    outputTokens: diff(total.output_tokens, before.output_tokens),
    cacheReadTokens: diff(total.cached_input_tokens, before.cached_input_tokens),
    cacheCreateTokens: diff(total.cache_write_input_tokens, before.cache_write_input_tokens),
  };
}

type ToolItem = Exclude<ThreadItem, { type: 'agent_message' | 'reasoning' | 'todo_list' | 'error' }>;

function toolCall(item: ToolItem, servers: readonly McpServerEntry[]): RunEvent {
  switch (item.type) {
    case 'command_execution':
      return runEvent('tool_call', { toolCallId: item.id, toolName: 'exec_command', input: { command: item.command } });
    case 'mcp_tool_call':
      return runEvent('tool_call', { toolCallId: item.id, toolName: eventToolName(servers, item.server, item.tool), input: item.arguments });
    case 'file_change':
      return runEvent('tool_call', { toolCallId: item.id, toolName: 'apply_patch', input: { changes: item.changes } });
    case 'web_search':
      return runEvent('tool_call', { toolCallId: item.id, toolName: 'web_search', input: { query: item.query } });
  }
}

function toolResult(item: ToolItem, servers: readonly McpServerEntry[]): RunEvent {
  const base = { toolCallId: item.id, toolName: toolCall(item, servers).toolName };
  switch (item.type) {
    case 'command_execution':
      return runEvent('tool_result', { ...base, output: { output: item.aggregated_output, exitCode: item.exit_code }, isError: item.status === 'failed' || (item.exit_code ?? 0) !== 0 });
    case 'mcp_tool_call': {
      const output = item.result ? { content: item.result.content, structuredContent: item.result.structured_content ?? undefined } : (item.error?.message ?? null);
      return runEvent('tool_result', { ...base, output, isError: item.status === 'failed' || !!item.error });
    }
    case 'file_change':
      return runEvent('tool_result', { ...base, output: { changes: item.changes, status: item.status }, isError: item.status === 'failed' });
    case 'web_search':
      return runEvent('tool_result', { ...base, output: { query: item.query }, isError: false });
  }
}

export interface CodexTranslatorInput {
  /** Totals of the thread before this turn (from its rollout). */
  before: CodexTotals;
  servers: readonly McpServerEntry[];
  onThreadId(threadId: string): void;
}

export function createCodexTranslator(input: CodexTranslatorInput): (event: ThreadEvent) => RunEvent[] {
  const texts: string[] = [];
  const started = new Set<string>();

  return (event) => {
    switch (event.type) {
      case 'thread.started':
        input.onThreadId(event.thread_id);
        return [runEvent('session', { runtimeSessionId: event.thread_id })];
      case 'turn.started':
        return [runEvent('progress', { message: 'Codex turn started' })];
      case 'item.started':
      case 'item.completed': {
        const item = event.item;
        if (item.type === 'agent_message') {
          if (event.type !== 'item.completed' || !item.text) return [];
          texts.push(item.text);
          return [runEvent('assistant', { message: item.text, delta: true })];
        }
        if (item.type === 'error') return [runEvent('progress', { message: `Codex: ${item.message}` })];
        if (item.type === 'reasoning' || item.type === 'todo_list') return [];
        const out: RunEvent[] = [];
        if (!started.has(item.id)) out.push(toolCall(item, input.servers)); // some items only ever arrive completed
        started.add(item.id);
        if (event.type === 'item.completed') out.push(toolResult(item, input.servers));
        return out;
      }
      case 'item.updated':
        return [];
      case 'turn.completed': {
        const out: RunEvent[] = [];
        if (texts.length) out.push(runEvent('assistant', { message: texts.join('\n\n') }));
        out.push(runEvent('usage', { usage: turnUsage(event.usage, input.before) }));
        out.push(runEvent('result', { message: texts.at(-1) ?? '' }));
        return out;
      }
      case 'turn.failed':
        return [runEvent('error', { message: event.error.message })];
      case 'error':
        return [runEvent('progress', { message: `Codex: ${event.message}` })];
    }
    return [];
  };
}
