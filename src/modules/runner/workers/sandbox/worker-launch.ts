import { DEFAULT_CEILINGS, DEFAULT_LIMITS, effectiveLimits, limitMessage } from '../../../../contracts/sandbox-limits.ts';
import { runEvent } from '../../../../contracts/run-event.ts';
import { createLogger } from '../../../../shared/log.ts';
import type { SessionRecord } from '../../sessions/sessions.store.ts';
import type { SandboxWorkersDeps } from './sandbox-workers.ts';
import type { Entry } from './worker-entry.ts';
import { providerEnvFor, providerOf } from './worker-socket.ts';

/**
 * Starting a session's sandbox worker: its environment (outbound mode, its own model provider only), the launch spec
 * on its substrate with the session's limits, the start timeout, and what the worker's exit means to the run it drives.
 */
export type LaunchDeps = Pick<SandboxWorkersDeps, 'tokens' | 'privateAddresses' | 'providerEnv' | 'vfs' | 'pools' | 'sandboxLimits' | 'onLimit'> & { startTimeoutMs: number };

const log = createLogger('runner:sandbox-workers');

/** The worker's environment: outbound mode for this session, and its own model provider only. */
async function workerEnv(deps: LaunchDeps, rec: SessionRecord, runnerUrl: string): Promise<Record<string, string>> {
  const token = await deps.tokens.mint('svc-worker', { tenant: rec.tenant, sessionId: rec.id });
  const env: Record<string, string> = {
    SVC_RUNNER_URL: runnerUrl,
    SVC_WORKER_TOKEN: token,
    SVC_SESSION_ID: rec.id,
    SVC_WORKER_PROTOCOL: '1',
    MODE: rec.runtime,
    SVC_LOG_LEVEL: 'warn',
    SVC_PRIVATE_ADDRESSES: deps.privateAddresses ?? 'allow',
  };
  return { ...env, ...providerEnvFor(providerOf(rec), deps.providerEnv, runnerUrl) };
}

export async function launchWorker(deps: LaunchDeps, entry: Entry, rec: SessionRecord, runnerUrl: string): Promise<void> {
  const env = await workerEnv(deps, rec, runnerUrl);
  const plan = await deps.vfs.view(rec, deps.pools.list(rec.tenant)).sandboxMounts();
  const resuming = entry.paused;
  try {
    const operator = deps.sandboxLimits ?? { defaults: DEFAULT_LIMITS, ceilings: DEFAULT_CEILINGS };
    const limits = effectiveLimits(operator, operator.ceilings, rec.profile.limits);
    const spec = { sessionId: rec.id, tenant: rec.tenant, runtime: rec.runtime, image: rec.profile.workerImage, env, sessionDir: entry.dir, callbackSocket: entry.socketPath, files: plan.mounts, limits };
    entry.worker = resuming ? entry.substrate.resume(spec, runnerUrl) : entry.substrate.launch(spec, runnerUrl);
  } finally {
    plan.close();
  }
  entry.polled = false;
  entry.paused = false;
  entry.commands.drop();
  const worker = entry.worker;
  // a worker that never comes up must not leave its run waiting forever
  const startTimer = setTimeout(() => {
    if (entry.worker !== worker || entry.polled) return;
    const active = entry.active;
    if (active && !active.channel.ended) {
      const tail = worker.stderrTail();
      active.channel.push(runEvent('error', { message: `sandbox worker did not start within ${deps.startTimeoutMs} ms${tail ? `: ${tail.split('\n').slice(-3).join(' | ')}` : ''}` }));
      active.channel.end();
    }
    void entry.substrate.stop(worker).catch(() => {});
  }, deps.startTimeoutMs);
  startTimer.unref();
  void worker.exited.then(() => clearTimeout(startTimer));
  log.info(resuming ? 'sandbox worker resumed' : 'sandbox worker launched', { sessionId: rec.id, workerId: worker.workerId, substrate: entry.substrate.id });
  worker.exited.then(({ code, signal, limit }) => {
    if (entry.worker !== worker) return;
    if (limit) {
      deps.onLimit?.(limit);
      log.warn('sandbox worker ended by a limit', { sessionId: rec.id, workerId: worker.workerId, limit: limit.limit, value: limit.value });
    }
    const active = entry.active;
    if (active && !active.channel.ended) {
      const tail = worker.stderrTail();
      // killed for a limit: the run says which, once (limit_exceeded, then its one error); the next run gets a fresh worker
      if (limit) {
        active.channel.push(runEvent('limit_exceeded', { message: limitMessage(limit), limit }));
        active.channel.push(runEvent('error', { message: `sandbox worker ended: ${limitMessage(limit)}` }));
      } else {
        active.channel.push(runEvent('error', { message: `sandbox worker exited (${signal ?? `code ${code}`}) before the run finished${tail ? `: ${tail.split('\n').slice(-3).join(' | ')}` : ''}` }));
      }
      active.channel.end();
    }
    entry.commands.answerWaiting({ protocol: 1, command: 'shutdown' });
  });
}
