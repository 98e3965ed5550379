import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** Runs the real `svc` binary as a child process (Node 24 from the project), for tests where processes are the point. */
export const SVC_BIN = fileURLToPath(new URL('../../bin/svc.js', import.meta.url));
export const NODE = fileURLToPath(new URL('../../node_modules/.bin/node', import.meta.url));

const BASE_ENV = () => ({ PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', SVC_LOG_LEVEL: 'warn' });

export function runSvc(args: string[], env: Record<string, string>, timeoutMs = 60_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(NODE, [SVC_BIN, ...args], { env: { ...BASE_ENV(), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

export interface SvcProcess {
  url: string;
  child: ChildProcess;
  output(): string;
  /** Resolves with the exit code once the process has exited. */
  exited: Promise<number | null>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Starts `svc serve` and resolves once it prints its listening line (the URL it serves). */
export function startSvcProcess(args: string[], env: Record<string, string>): Promise<SvcProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(NODE, [SVC_BIN, 'serve', '--port=0', ...args], { env: { ...BASE_ENV(), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let listening = false;
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    const onOutput = (d: Buffer) => {
      out += d;
      const m = listening ? null : /svc listening on (http:\/\/\S+)/.exec(out);
      if (!m) return;
      listening = true;
      resolve({
        url: m[1],
        child,
        output: () => out,
        exited,
        async stop(signal = 'SIGTERM') {
          if (child.exitCode === null && child.signalCode === null) child.kill(signal);
          return exited;
        },
      });
    };
    child.stdout!.on('data', onOutput);
    child.stderr!.on('data', onOutput);
    exited.then((code) => {
      if (!listening) reject(new Error(`svc exited with ${code} before listening:\n${out}`));
    });
  });
}

/** Resolves once the process has printed a line matching `pattern` (checked on every chunk it writes). */
export function waitForOutput(p: SvcProcess, pattern: RegExp, timeoutMs = 30_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const check = () => {
      if (!pattern.test(p.output())) return;
      done();
      resolve(p.output());
    };
    const timer = setTimeout(() => {
      done();
      reject(new Error(`no output matching ${pattern} within ${timeoutMs} ms:\n${p.output()}`));
    }, timeoutMs);
    const done = () => {
      clearTimeout(timer);
      p.child.stdout!.off('data', onData);
      p.child.stderr!.off('data', onData);
    };
    // Our own listener runs after startSvcProcess's, which appends the chunk to the output first.
    const onData = () => check();
    p.child.stdout!.on('data', onData);
    p.child.stderr!.on('data', onData);
    check();
  });
}
