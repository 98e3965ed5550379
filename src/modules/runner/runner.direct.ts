import { callErrorOf, untilAborted } from '../../contracts/direct.ts';
import { CallError } from '../../contracts/http-client.ts';
import { runEventsOf, type RunnerClient } from '../../contracts/runner.client.ts';
import { activeTrace } from '../../shared/tracing/index.ts';
import { openRun, type OpenRunDeps } from './runs/open-run.ts';
import { exportState, type StateDeps } from './sessions/state.service.ts';

const NEVER = new AbortController().signal;

/**
 * The runner contract's direct transport (contracts/runner.client.ts), for a conductor in this process. The hot path
 * of a run is direct: `run` and `attach` hand over the run's own RunEvent objects (pulled, so the runner reads ahead
 * only as far as the conductor reads), `cancelRun` and `exportState` (after every run) call the services. The other
 * methods (profiles, sessions, toolkit, leases: a few per session, not per event) go through `viaApp`, the HTTP
 * client on the runner's app in-process. The caller is this process's conductor: no internal token, and the tenant
 * and the run body are not validated again (the routes do both for what arrives over HTTP). Failures are the
 * CallErrors the HTTP client throws, with the statuses the routes answer.
 */
export function createDirectRunnerClient(deps: OpenRunDeps & StateDeps, viaApp: RunnerClient): RunnerClient {
  return {
    ...viaApp,
    async run(tenant, subTask, signal, o = {}) {
      let opened;
      try {
        signal?.throwIfAborted();
        // what the HTTP client leaves out of the body (empty lists, false) is left out here too
        const body = {
          subTask,
          skills: o.skills?.length ? o.skills : undefined,
          model: o.model,
          mcpServers: o.mcpServers?.length ? o.mcpServers : undefined,
          env: o.env,
          parkable: o.parkable || undefined,
          resume: o.resume,
        };
        opened = openRun(deps, tenant, body, { runToken: o.runToken || undefined, adoptable: o.adoptable === true, trace: activeTrace() }, signal ?? NEVER);
      } catch (err) {
        throw callErrorOf(err, 'runner POST /runner/run', signal);
      }
      return runEventsOf(untilAborted(opened.events, signal, opened.hangUp), signal);
    },
    async attach(tenant, runId, after, signal) {
      const detach = new AbortController();
      let events;
      try {
        signal?.throwIfAborted();
        events = deps.taps.read(tenant, runId, after, detach.signal);
      } catch (err) {
        throw callErrorOf(err, `runner GET /runner/runs/${runId}/events`, signal);
      }
      return runEventsOf(untilAborted(events, signal, () => detach.abort()), signal);
    },
    async cancelRun(tenant, runId) {
      return deps.taps.cancel(tenant, runId, 'cancelled by its conductor');
    },
    async exportState(tenant, sessionId) {
      try {
        return await exportState(deps, deps.sessions.require(tenant, sessionId));
      } catch (err) {
        const failed = callErrorOf(err, `runner GET /runner/sessions/${sessionId}/state`);
        if (failed instanceof CallError && failed.status === 404) return undefined;
        throw failed;
      }
    },
  };
}
