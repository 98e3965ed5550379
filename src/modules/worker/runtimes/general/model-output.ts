/**
 * How an MCP tool result reads to the model (toolset.ts), kept apart from the AI SDK so the history (history.ts) can
 * use it without loading the SDK: a resumed parked call's result (history.ts resumeHistory) reads as any other.
 */
interface McpResultLike {
  content?: Array<{ type: string; text?: string }>;
  structuredContent?: unknown;
  isError?: boolean;
}

export function isMcpError(output: unknown): boolean {
  return !!output && typeof output === 'object' && (output as McpResultLike).isError === true;
}

/** What the model reads back: the text parts of an MCP result (other parts as JSON), flagged as an error if it is one. */
export function toModelOutput({ output }: { output: unknown }) {
  const result = (output ?? {}) as McpResultLike;
  const parts = Array.isArray(result.content) ? result.content : [];
  const text = parts.length
    ? parts.map((p) => (p.type === 'text' && typeof p.text === 'string' ? p.text : JSON.stringify(p))).join('\n')
    : JSON.stringify(result.structuredContent ?? output ?? null);
  return isMcpError(output) ? { type: 'error-text' as const, value: text } : { type: 'text' as const, value: text };
}

