import { consola } from 'consola';

/**
 * Terminal prompts, used only when stdin and stdout are terminals (scripts never block on a question). Ctrl-C in a
 * prompt behaves as everywhere else: the interrupt handler runs and the process exits 130.
 */
function cancelled(): never {
  process.kill(process.pid, 'SIGINT');
  // the handler exits; never resolve
  throw new Error('interrupted');
}

export async function confirm(message: string, initial = false): Promise<boolean> {
  const answer = await consola.prompt(message, { type: 'confirm', initial, cancel: 'symbol' });
  if (typeof answer === 'symbol') cancelled();
  return answer === true;
}

export async function select(message: string, options: string[], initial?: string): Promise<string> {
  const answer = await consola.prompt(message, { type: 'select', options, initial, cancel: 'symbol' });
  if (typeof answer !== 'string') cancelled();
  return answer;
}

/** Reads a line without echoing it (a `*` per character). Resolves with the trimmed text; aborting stops reading. */
export function readSecret(message: string, opts: { signal?: AbortSignal } = {}): Promise<string> {
  const stdin = process.stdin;
  return new Promise<string>((resolve, reject) => {
    let value = '';
    process.stderr.write(message);
    const done = () => {
      stdin.off('data', onData);
      opts.signal?.removeEventListener('abort', onAbort);
      if (stdin.isTTY) stdin.setRawMode(false);
      stdin.pause();
    };
    const onAbort = () => {
      done();
      process.stderr.write('\n');
      reject(new Error('aborted'));
    };
    const onData = (chunk: Buffer) => {
      for (const ch of chunk.toString('utf8')) {
        if (ch === '\u0003') {
          done();
          process.stderr.write('\n');
          return cancelled();
        }
        if (ch === '\r' || ch === '\n' || ch === '\u0004') {
          if (!value.trim()) continue;
          done();
          process.stderr.write('\n');
          return resolve(value.trim());
        }
        if (ch === '\u007f' || ch === '\b') {
          if (value) {
            value = value.slice(0, -1);
            process.stderr.write('\b \b');
          }
          continue;
        }
        if (ch >= ' ') {
          value += ch;
          process.stderr.write('*');
        }
      }
    };
    if (opts.signal?.aborted) return onAbort();
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    if (stdin.isTTY) stdin.setRawMode(true);
    stdin.resume();
    stdin.on('data', onData);
  });
}
