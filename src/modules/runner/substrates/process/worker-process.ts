import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { basename, dirname, join } from 'node:path';
import { randomId } from '../../../../shared/ids.ts';
import { createLogger } from '../../../../shared/log.ts';
import type { Jail, Limiter } from '../../limits/index.ts';
import type { Sandbox } from '../../sandbox/index.ts';
import { codeEnv, programMounts } from '../program.ts';
import type { LaunchedWorker, SubstrateStatus, WorkerLaunch, WorkerSubstrate } from '../substrate.ts';

/**
 * The `process` substrate: each sandbox session gets its own worker process — this same program, `svc serve
 * --role=worker` in outbound mode — inside bubblewrap (sandbox/). The worker sees the system folders and the program
 * read-only, its session's files where run_command sees them, its own writable folder as home and state dir
 * (`/var/svc`), and the runner's callback socket (`/run/svc`); nothing of the runner's data folder, of other sessions,
 * of `/root` or of the server's environment. Its network namespace has only a loopback device: the worker's relay
 * (SVC_WORKER_RELAY) turns `http://127.0.0.1:7070` into the callback socket, the one way out, on which the runner
 * answers the callback protocol and forwards to the configured model provider. Nothing else is reachable.
 *
 * Without bubblewrap the substrate is not offered, unless the operator opted out of sandboxing (SVC_SANDBOX=off):
 * then workers are plain processes with the same scrubbed environment, unisolated.
 *
 * Either way the worker runs in a jail of its session's limits (limits/): a cgroup of its own (memory with swap,
 * processes, CPU quota) and rlimits (CPU time, file size, open files). A worker the kernel killed for one exits with
 * that `limit`, so its run ends with an error naming it and the next run gets a fresh worker. Its wall time is its
 * runs' business: a worker lives across runs.
 */
export const PROCESS_SUBSTRATE = 'process';
/** Inside the sandbox: where the session's own folder and the callback socket's folder are mounted. */
export const WORKER_HOME = '/var/svc';
export const SOCKET_DIR = '/run/svc';
/** The relay's port on the sandbox's own loopback (no other process can see it). */
const SANDBOX_RELAY_PORT = 7070;
const PATH = '/usr/local/bin:/usr/bin:/bin';
const STDERR_TAIL = 4096;
const log = createLogger('runner:substrate:process');

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export function createProcessSubstrate(sandbox: Sandbox, limiter?: Limiter): WorkerSubstrate {
  let current: SubstrateStatus = { offered: false, detail: 'checking the sandbox' };
  const ready = Promise.all([sandbox.ready(), limiter?.ready()]).then(([s]): SubstrateStatus => {
    current =
      s.mode === 'off'
        ? { offered: true, detail: 'unisolated worker processes (SVC_SANDBOX=off, the operator opted out of sandboxing)' }
        : s.available
          ? { offered: true, detail: `one worker process per session in bubblewrap (${s.detail})` }
          : { offered: false, detail: `not offered: ${s.detail}` };
    return current;
  });
  const ports = new Map<string, number>();

  /**
   * `exited` settles once nothing of the worker can still reach the runner. Unisolated, that is the worker process's
   * exit. In bubblewrap it is later than bwrap's exit: the worker runs in a session of its own (`--new-session`), so
   * the process-group SIGKILL ends bwrap, and the worker only dies once the sandbox's pid namespace is torn down; until
   * then it can still poll the callback socket (and take the next run) or write its state. Every process in the sandbox
   * holds the stdout and stderr pipes, so their close (the child's `close` event) is the sandbox's true end.
   */
  function watch(child: ChildProcess, workerId: string, endsOn: 'exit' | 'close', jail: Jail | undefined, stopping: () => boolean): LaunchedWorker {
    let tail = '';
    child.stderr?.on('data', (d: Buffer) => {
      tail = (tail + d.toString('utf8')).slice(-STDERR_TAIL);
      log.debug('worker stderr', { workerId, text: d.toString('utf8').trimEnd() });
    });
    child.stdout?.resume();
    const ended = new Promise<{ code: number | null; signal: string | null }>((resolve) => {
      child.once('error', (err) => {
        tail += `\n${err.message}`;
        resolve({ code: null, signal: null });
      });
      child.once(endsOn, (code: number | null, signal: NodeJS.Signals | null) => resolve({ code, signal }));
    });
    // what ended it, from the kernel's counts (not when the runner stopped it itself); the jail goes with it
    const exited = ended.then(async (e) => {
      if (!jail) return e;
      const verdict = stopping() ? {} : await jail.verdict(e).catch(() => ({ limit: undefined }));
      await jail.close();
      return verdict.limit ? { ...e, limit: verdict.limit } : e;
    });
    return { workerId, pid: child.pid, startedAt: new Date().toISOString(), exited, stderrTail: () => tail.trim() };
  }

  const alive = new Map<LaunchedWorker, { child: ChildProcess; jail: Jail | undefined; stopping: boolean }>();

  function launch(l: WorkerLaunch, runnerUrl: string): LaunchedWorker {
    if (l.image) throw new Error(`workerImage "${l.image}" is not supported by the process substrate (it runs this program; images need a container substrate)`);
    const refused = limiter?.refusal();
    if (refused) throw new Error(`sandbox workers are refused on this runner: ${refused}`);
    const jail = limiter?.jail({ sessionId: l.sessionId, tenant: l.tenant, scope: 'worker', limits: l.limits });
    const { argv, hostArgv, mounts } = programMounts();
    const isolated = current.offered && sandbox.status().mode === 'bwrap';
    const port = Number(new URL(runnerUrl).port);
    let child: ChildProcess;
    if (isolated) {
      const socketInside = `${SOCKET_DIR}/${basename(l.callbackSocket)}`;
      const env = { ...l.env, ...codeEnv(), PATH, LANG: 'C.UTF-8', HOME: `${WORKER_HOME}/home`, SVC_STATE_DIR: `${WORKER_HOME}/state`, TMPDIR: '/tmp', SVC_WORKER_RELAY: `${port}:${socketInside}` };
      child = sandbox.spawn(
        {
          argv,
          cwd: l.files.some((m) => m.target === '/work') ? '/work' : `${WORKER_HOME}/home`,
          env,
          mounts: [
            ...mounts,
            ...l.files,
            { type: 'bind', source: { path: l.sessionDir }, target: WORKER_HOME, writable: true },
            { type: 'bind', source: { path: dirname(l.callbackSocket) }, target: SOCKET_DIR, writable: false },
          ],
          network: false,
        },
        { stdio: ['ignore', 'pipe', 'pipe'], jail },
      );
    } else {
      const env = { ...l.env, ...codeEnv(), PATH, LANG: 'C.UTF-8', HOME: join(l.sessionDir, 'home'), SVC_STATE_DIR: join(l.sessionDir, 'state'), SVC_WORKER_RELAY: `${port}:${l.callbackSocket}` };
      const [file, ...args] = jail ? jail.enter(jail.rlimit(hostArgv, { nproc: false })) : hostArgv;
      child = spawn(file, args, { env, cwd: join(l.sessionDir, 'home'), detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    }
    const entry = { child, jail, stopping: false };
    const worker = watch(child, `${PROCESS_SUBSTRATE}-${child.pid ?? 0}-${randomId(6)}`, isolated ? 'close' : 'exit', jail, () => entry.stopping);
    alive.set(worker, entry);
    worker.exited.then(() => alive.delete(worker));
    return worker;
  }

  function kill(worker: LaunchedWorker, signal: NodeJS.Signals): void {
    const entry = alive.get(worker);
    const pid = entry?.child.pid;
    if (!entry || !pid) return;
    const child = entry.child;
    entry.stopping = true;
    try {
      process.kill(-pid, signal); // its whole process group: bubblewrap and everything inside
    } catch {
      child.kill(signal);
    }
    if (signal === 'SIGKILL') void entry.jail?.kill();
  }

  async function stopWithin(worker: LaunchedWorker, graceMs: number): Promise<void> {
    if (!alive.has(worker)) return;
    // told to shut down: its exit is the runner's doing, not a limit's
    alive.get(worker)!.stopping = true;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([worker.exited, new Promise((r) => (timer = setTimeout(r, graceMs)))]);
    clearTimeout(timer);
    if (alive.has(worker)) {
      kill(worker, 'SIGKILL');
      await worker.exited;
    }
  }

  return {
    id: PROCESS_SUBSTRATE,
    ready: () => ready,
    status: () => current,
    async runnerUrlFor({ sessionId }) {
      // isolated: the sandbox's own loopback; unisolated: a free port on the host's, one per session
      if (sandbox.status().mode === 'bwrap') return `http://127.0.0.1:${SANDBOX_RELAY_PORT}`;
      let port = ports.get(sessionId);
      if (!port) ports.set(sessionId, (port = await freePort()));
      return `http://127.0.0.1:${port}`;
    },
    launch,
    resume: launch,
    pause: stopWithin,
    async stop(worker) {
      kill(worker, 'SIGKILL');
      if (alive.has(worker)) await worker.exited;
    },
    state: (worker) => (alive.has(worker) ? 'running' : 'gone'),
  };
}
