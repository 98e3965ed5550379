import type { SDKMessage, SDKResultMessage } from '@anthropic-ai/claude-agent-sdk';
import { runEvent, type RunEvent, type Usage } from '../../../../contracts/run-event.ts';
import { eventToolName, type McpServerEntry } from '../sdk/mcp.ts';

/**
 * Claude Agent SDK messages → RunEvents (RUNTIMES.md §2 "Message stream"). Only the main agent's messages count
 * (`parent_tool_use_id` null). Text streams as deltas from `stream_event`s; whole assistant messages give tool calls;
 * user messages carry tool results; `result` gives usage and the terminal. A provider error arrives as a synthetic
 * assistant message and a `result` with `is_error` (subtype still "success"): both become the one terminal `error`.
 */
type Block = { type: string; [key: string]: unknown };

/** `mcp__svc__echo` → `echo`, `mcp__ext__read` → `ext__read` (the names the general runtime uses); built-ins as they are. */
export function toolNameOf(name: string, servers: readonly McpServerEntry[]): string {
  const m = /^mcp__([^_]+(?:_[^_]+)*)__(.+)$/.exec(name);
  return m ? eventToolName(servers, m[1], m[2]) : name;
}

function usageOf(result: SDKResultMessage): Usage {
  const u = result.usage;
  return {
    inputTokens: u.input_tokens ?? 0,
    outputTokens: u.output_tokens ?? 0,
    cacheReadTokens: u.cache_read_input_tokens ?? 0,
    cacheCreateTokens: u.cache_creation_input_tokens ?? 0,
  };
}

function errorMessageOf(result: SDKResultMessage, apiError: string | undefined): string {
  const text = 'result' in result && typeof result.result === 'string' ? result.result : '';
  const errors = 'errors' in result && Array.isArray(result.errors) ? result.errors.join('; ') : '';
  return text || errors || apiError || `Claude Code ended with ${result.subtype}`;
}

/** `announced`: the session id already sent as a `session` event; another id (a fork) is announced again. */
export function createClaudeTranslator(announced: string, servers: readonly McpServerEntry[]): (message: SDKMessage) => RunEvent[] {
  let sessionId = announced;
  let streamed = '';
  const texts: string[] = [];
  const toolNames = new Map<string, string>();
  let apiError: string | undefined;

  return (message) => {
    const events: RunEvent[] = [];
    if ('parent_tool_use_id' in message && message.parent_tool_use_id) return events; // subagent traffic
    if ('session_id' in message && message.session_id && message.session_id !== sessionId) {
      sessionId = message.session_id;
      events.push(runEvent('session', { runtimeSessionId: sessionId }));
    }
    switch (message.type) {
      case 'system':
        if (message.subtype === 'init') events.push(runEvent('progress', { message: `Claude Code ${message.claude_code_version} started (model ${message.model}, ${message.tools.length} tools)` }));
        else if (message.subtype === 'api_retry') events.push(runEvent('progress', { message: 'retrying the model request' }));
        break;
      case 'stream_event': {
        const event = message.event as { type: string; delta?: { type: string; text?: string } };
        if (event.type === 'content_block_delta' && event.delta?.type === 'text_delta' && event.delta.text) {
          streamed += event.delta.text;
          events.push(runEvent('assistant', { message: event.delta.text, delta: true }));
        }
        break;
      }
      case 'assistant': {
        const blocks = message.message.content as unknown as Block[];
        const text = blocks.filter((b) => b.type === 'text').map((b) => String(b.text ?? '')).join('');
        if (message.error || message.message.model === '<synthetic>') {
          apiError = text || message.error; // reported by the `result` that follows, once
          break;
        }
        // Without partial messages (or a non-streaming fallback) the text arrives whole: stream it as one delta.
        if (text && !streamed) events.push(runEvent('assistant', { message: text, delta: true }));
        if (text) texts.push(text);
        streamed = '';
        for (const block of blocks.filter((b) => b.type === 'tool_use')) {
          const id = String(block.id);
          toolNames.set(id, toolNameOf(String(block.name), servers));
          events.push(runEvent('tool_call', { toolCallId: id, toolName: toolNames.get(id), input: block.input }));
        }
        break;
      }
      case 'user': {
        const content = message.message.content;
        if (!Array.isArray(content)) break;
        for (const block of content as unknown as Block[]) {
          if (block.type !== 'tool_result') continue;
          const id = String(block.tool_use_id);
          const raw = block.content;
          const output = { content: typeof raw === 'string' ? [{ type: 'text', text: raw }] : (raw ?? []) };
          events.push(runEvent('tool_result', { toolCallId: id, toolName: toolNames.get(id), output, isError: block.is_error === true }));
        }
        break;
      }
      case 'result': {
        const usage = usageOf(message);
        if (message.is_error || message.subtype !== 'success') {
          // Steps that ran before the failure were billed; a failed first request reports zeros and no usage event.
          if (usage.inputTokens || usage.outputTokens) events.push(runEvent('usage', { usage }));
          events.push(runEvent('error', { message: errorMessageOf(message, apiError) }));
          break;
        }
        if (texts.length) events.push(runEvent('assistant', { message: texts.join('\n\n') }));
        events.push(runEvent('usage', { usage }));
        events.push(runEvent('result', { message: message.result }));
        break;
      }
    }
    return events;
  };
}
