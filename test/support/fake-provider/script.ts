/**
 * The fake provider's script: what the last input of a request was (a user prompt or a tool result), and what to
 * answer. The same rules serve all five wire formats, so one prompt behaves alike whichever provider a test drives.
 */
export type Wire = 'chat' | 'responses' | 'anthropic' | 'gemini' | 'bedrock';

export interface LastInput {
  kind: 'user' | 'tool';
  text: string;
}

export type Plan =
  | { kind: 'text'; deltas: string[]; intervalMs: number }
  | { kind: 'tool'; name: string; namespace: string | undefined; args: string; custom?: boolean; also?: Array<{ name: string; args: string }> }
  | { kind: 'fail'; status: number }
  | { kind: 'hang'; first: string };

const REMINDER = /<system-reminder>[\s\S]*?<\/system-reminder>/g;

/** Claude Code wraps environment notes in reminder blocks, even inside tool results; scripts must not see them. */
export function stripReminders(text: string): string {
  return text.replace(REMINDER, '').trim();
}

/** Text of a message content in any of the wires: a string, or parts carrying `text`; anything else as JSON. */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((part) => (part && typeof part === 'object' && typeof part.text === 'string' ? part.text : typeof part === 'string' ? part : ''))
      .join('');
  }
  return content === undefined || content === null ? '' : JSON.stringify(content);
}

/** The input a reply is scripted from: the last user message or tool result of the request, per wire. */
export function lastInput(wire: Wire, body: any): LastInput | undefined {
  if (!body || typeof body !== 'object') return undefined;
  if (wire === 'anthropic') {
    const messages: any[] = Array.isArray(body.messages) ? body.messages : [];
    // The last entry may be a trailing role:"system" message (Claude Code); look for the last user turn.
    const user = messages.findLast((m) => m?.role === 'user');
    if (!user) return undefined;
    const blocks: any[] = typeof user.content === 'string' ? [{ type: 'text', text: user.content }] : user.content ?? [];
    const toolResult = blocks.findLast((b) => b?.type === 'tool_result');
    if (toolResult) return { kind: 'tool', text: stripReminders(textOf(toolResult.content)) };
    // The newest prompt is the last text block: after a failed turn Claude Code merges that turn's prompt and the
    // next one into one user message (the synthetic error reply is never sent).
    const texts = blocks.filter((b) => b?.type === 'text').map((b) => stripReminders(textOf([b]))).filter(Boolean);
    return { kind: 'user', text: texts.at(-1) ?? '' };
  }
  if (wire === 'gemini') {
    const contents: any[] = Array.isArray(body.contents) ? body.contents : [];
    const user = contents.findLast((c) => c?.role === 'user');
    if (!user) return undefined;
    const parts: any[] = Array.isArray(user.parts) ? user.parts : [];
    const response = parts.findLast((part) => part?.functionResponse)?.functionResponse;
    if (response) return { kind: 'tool', text: typeof response.response?.content === 'string' ? response.response.content : JSON.stringify(response.response) };
    return { kind: 'user', text: textOf(parts) };
  }
  if (wire === 'bedrock') {
    const messages: any[] = Array.isArray(body.messages) ? body.messages : [];
    const user = messages.findLast((m) => m?.role === 'user');
    if (!user) return undefined;
    const blocks: any[] = Array.isArray(user.content) ? user.content : [];
    const result = blocks.findLast((b) => b?.toolResult)?.toolResult;
    if (result) return { kind: 'tool', text: textOf(result.content) };
    return { kind: 'user', text: textOf(blocks) };
  }
  if (wire === 'responses') {
    if (typeof body.input === 'string') return { kind: 'user', text: body.input };
    const items: any[] = Array.isArray(body.input) ? body.input : [];
    for (let i = items.length - 1; i >= 0; i--) {
      const item = items[i];
      if (item?.type === 'function_call_output' || item?.type === 'custom_tool_call_output') return { kind: 'tool', text: textOf(item.output) };
      if (item?.role === 'user' && (item.type === undefined || item.type === 'message')) return { kind: 'user', text: textOf(item.content) };
    }
    return undefined;
  }
  const messages: any[] = Array.isArray(body.messages) ? body.messages : [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.role === 'tool') return { kind: 'tool', text: textOf(m.content) };
    if (m?.role === 'user') return { kind: 'user', text: textOf(m.content) };
  }
  return undefined;
}

/** Splits a reply into a few word-aligned deltas (at most 8), so clients see real streaming. */
export function chunkReply(text: string): string[] {
  const words = text.split(/(?<= )/);
  const size = Math.max(1, Math.ceil(words.length / 8));
  const out: string[] = [];
  for (let i = 0; i < words.length; i += size) out.push(words.slice(i, i + size).join(''));
  return out;
}

const numbered = (n: number) => Array.from({ length: n }, (_, i) => `d${i} `);

/** Decides the reply from the last input; directives may sit anywhere in the prompt. */
export function planFor(input: LastInput | undefined): Plan {
  if (!input) return { kind: 'text', deltas: chunkReply('FAKE-REPLY: '), intervalMs: 0 };
  const fail = /FAIL_HTTP_(\d{3})/.exec(input.text);
  // A tool result may carry FAIL_HTTP_<code> too: that fails the step after a tool ran (partial-turn tests).
  if (input.kind === 'tool') {
    return fail ? { kind: 'fail', status: Number(fail[1]) } : { kind: 'text', deltas: chunkReply(`TOOL-RESULT-SEEN: ${input.text}`), intervalMs: 0 };
  }
  const prompt = input.text;
  // A freeform (custom) tool such as Codex's apply_patch: the rest of the prompt is a JSON string, its raw input.
  const custom = /CALL_CUSTOM\s+(\S+)\s+("(?:[^"\\]|\\.)*")/.exec(prompt);
  if (custom) return { kind: 'tool', namespace: undefined, name: custom[1], args: JSON.parse(custom[2]) as string, custom: true };
  // CALL_TOOL wins over FAIL_HTTP_ so a tool's arguments can script the failure of the step after it.
  const call = /CALL_TOOL\s+(\S+)(?:[ \t]+(.*))?/.exec(prompt);
  if (call) {
    const args = call[2]?.trim() || '{}';
    // further CALL_TOOL lines are parallel calls in the same reply (the Chat wire answers with all of them)
    const also = [...prompt.matchAll(/CALL_TOOL\s+(\S+)(?:[ \t]+(.*))?/g)].slice(1).map((m) => ({ name: m[1], args: m[2]?.trim() || '{}' }));
    const slash = call[1].indexOf('/');
    return slash > 0
      ? { kind: 'tool', namespace: call[1].slice(0, slash), name: call[1].slice(slash + 1), args, ...(also.length ? { also } : {}) }
      : { kind: 'tool', namespace: undefined, name: call[1], args, ...(also.length ? { also } : {}) };
  }
  if (fail) return { kind: 'fail', status: Number(fail[1]) };
  const slow = /SLOW_DELTAS\s+(\d+)\s+(\d+)/.exec(prompt);
  if (slow) return { kind: 'text', deltas: numbered(Number(slow[1])), intervalMs: Number(slow[2]) };
  const many = /DELTAS\s+(\d+)/.exec(prompt);
  if (many) return { kind: 'text', deltas: numbered(Number(many[1])), intervalMs: 0 };
  // one reply delta of <n> MiB: a model answer that bloats its client (the sandbox limit tests' memory hog in a worker)
  const huge = /HUGE_REPLY\s+(\d+)/.exec(prompt);
  if (huge) return { kind: 'text', deltas: ['x'.repeat(Number(huge[1]) * 1024 * 1024)], intervalMs: 0 };
  if (prompt.includes('HANG_AFTER_FIRST')) return { kind: 'hang', first: 'd0 ' };
  return { kind: 'text', deltas: chunkReply(`FAKE-REPLY: ${prompt}`), intervalMs: 0 };
}

/** The reasoning summary the fake gives when asked for one: two parts, each streamed in a few deltas. */
export const FAKE_REASONING = ['Reading the prompt closely. ', 'Planning a short reply.'] as const;

/** Deterministic token counts, so usage assertions do not depend on the request. */
export const FAKE_USAGE = { input: 12, cached: 4, cacheWrite: 2 } as const;
