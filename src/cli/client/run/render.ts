import type { Output } from '../output.ts';
import type { StreamEvent } from './stream.ts';

/**
 * Renders run events for a person: assistant text on stdout as it streams, tool calls and results dimmed on stderr,
 * a spinner (terminals only) until the first event. Returns the terminal event's outcome.
 */
export interface Renderer {
  event(e: StreamEvent): void;
  stop(): void;
}

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

function brief(value: unknown, max = 100): string {
  if (value === undefined) return '';
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > max ? text.slice(0, max - 1) + '…' : text;
}

export function createRenderer(out: Output, opts: { spinner: boolean }): Renderer {
  let timer: NodeJS.Timeout | undefined;
  let frame = 0;
  if (opts.spinner) {
    timer = setInterval(() => process.stderr.write(`\r${FRAMES[frame++ % FRAMES.length]} waiting for the run…`), 80);
  }
  const stopSpinner = () => {
    if (!timer) return;
    clearInterval(timer);
    timer = undefined;
    process.stderr.write('\r\u001B[K');
  };
  let streaming = false; // deltas of the current assistant message were printed
  let printedText = false;
  let atLineStart = true;
  const write = (s: string) => {
    if (!s) return;
    out.write(s);
    printedText = true;
    atLineStart = s.endsWith('\n');
  };
  const endLine = () => {
    if (!atLineStart) write('\n');
  };
  return {
    event(e) {
      stopSpinner();
      switch (e.type) {
        case 'assistant':
          if (e.delta) {
            streaming = true;
            write(e.message ?? '');
          } else {
            if (!streaming) write(e.message ?? '');
            streaming = false;
            endLine();
          }
          break;
        case 'queued':
          process.stderr.write(out.dim(e.message ?? 'queued: waiting for the session') + '\n');
          break;
        case 'tool_call':
          endLine();
          process.stderr.write(out.dim(`→ ${e.toolName ?? 'tool'} ${brief(e.input)}`) + '\n');
          break;
        case 'tool_result':
          process.stderr.write(out.dim(`← ${e.toolName ?? 'tool'}${e.isError ? ' failed' : ''}: ${brief(e.output)}`) + '\n');
          break;
        case 'approval_required':
          endLine();
          process.stderr.write(`? ${e.toolName ?? 'a tool'} ${brief(e.input)} waits for approval ${e.approvalId} (until ${e.expiresAt})\n`);
          break;
        case 'approval_decided':
          process.stderr.write(out.dim(`  approval ${e.approvalId}: ${e.decision === 'approve' ? 'approved' : `denied (${e.reason ?? 'denied'})`}${e.message ? `: ${e.message}` : ''}`) + '\n');
          break;
        case 'result':
          if (!printedText && e.message) write(e.message);
          endLine();
          break;
        case 'error':
          endLine();
          break;
      }
    },
    stop: stopSpinner,
  };
}
