import { callErrorOf, untilAborted } from '../../contracts/direct.ts';
import { CallError } from '../../contracts/http-client.ts';
import { runEventsOf, type RunnerClient } from '../../contracts/runner.client.ts';
import { ProfileSpec } from '../../contracts/runner.wire.ts';
import { badRequest } from '../../shared/errors.ts';
import { parseWith } from '../../shared/http.ts';
import { activeTrace } from '../../shared/tracing/index.ts';
import { createSession } from './sessions/sessions.service.ts';
import { openRun, type OpenRunDeps } from './runs/open-run.ts';
import { exportState, type StateDeps } from './sessions/state.service.ts';

const NEVER = new AbortController().signal;

/**
 * The runner contract's direct transport (contracts/runner.client.ts), for a conductor in this process. The hot path
 * of a run is direct: `createSession` (a new conversation's run), `run` and `attach` (the run's own RunEvent objects,
 * pulled), `cancelRun`, and `exportState` (after every run) call the services. The other methods (profiles, pools,
 * session reads, toolkit, approvals, leases: not on a plain run's path) go through `viaApp`, the HTTP client on the
 * runner's app in-process. The caller is this process's conductor: no internal token, and the tenant and the run body
 * are not validated again (the routes do both for what arrives over HTTP); a session's profile is, since the runner
 * keeps it. Failures are the CallErrors the HTTP client throws, with the statuses the routes answer.
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
    async createSession(tenant, profileName, profile, o) {
      try {
        if (profile) {
          // validated as the route does: the runner keeps valibot's copy, not the conductor's object
          const spec = parseWith(ProfileSpec, profile);
          if (spec.name !== profileName) throw badRequest('profile.name: expected the profileName');
          deps.profiles.put(tenant, spec);
        }
        return createSession(deps, tenant, profileName, o?.sandboxOf).id;
      } catch (err) {
        throw callErrorOf(err, 'runner POST /runner/sessions');
      }
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
