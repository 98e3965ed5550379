/**
 * Exit codes of the `svc` client (seed 001): 0 success; 1 failure; 2 usage error; 3 authentication failure (bad key,
 * missing URL or key, login denied); 4 not found; 130 interrupted. Commands throw CliError; the runner exits with its
 * code after printing its message.
 */
export const EXIT = { ok: 0, failure: 1, usage: 2, auth: 3, notFound: 4, interrupted: 130 } as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

export class CliError extends Error {
  readonly code: ExitCode;
  /** A remedy printed under the message. */
  readonly hint: string | undefined;
  constructor(code: ExitCode, message: string, hint?: string) {
    super(message);
    this.name = 'CliError';
    this.code = code;
    this.hint = hint;
  }
}

export const usageError = (message: string, hint?: string) => new CliError(EXIT.usage, message, hint);
export const authError = (message: string, hint?: string) => new CliError(EXIT.auth, message, hint);
export const failure = (message: string, hint?: string) => new CliError(EXIT.failure, message, hint);
export const notFoundError = (message: string) => new CliError(EXIT.notFound, message);

/** Cleanups that run on Ctrl-C before the process exits 130 (e.g. cancelling the run `svc run` started). */
const onInterrupt: Array<() => Promise<void> | void> = [];
let interrupted = false;

/** True once Ctrl-C was pressed: the interrupt handler owns the exit (130), whatever the command does meanwhile. */
export const isInterrupted = () => interrupted;

export function whenInterrupted(fn: () => Promise<void> | void): () => void {
  onInterrupt.push(fn);
  return () => {
    const i = onInterrupt.indexOf(fn);
    if (i >= 0) onInterrupt.splice(i, 1);
  };
}

export function installInterruptHandler(exit: (code: number) => void, say: (message: string) => void): void {
  process.on('SIGINT', () => {
    if (interrupted) return exit(EXIT.interrupted); // a second Ctrl-C does not wait for cleanups
    interrupted = true;
    void interrupt(exit, say);
  });
}

export async function interrupt(exit: (code: number) => void, say: (message: string) => void): Promise<void> {
  interrupted = true;
  const cleanups = onInterrupt.splice(0).reverse();
  const limit = new Promise((r) => setTimeout(r, 3000).unref());
  await Promise.race([Promise.allSettled(cleanups.map(async (fn) => fn())), limit]);
  say('interrupted');
  exit(EXIT.interrupted);
}
