import { SESSION_STATUS_CODES, type SessionStatus } from '../../contracts/runner.ts';
import type { Metrics } from '../../shared/metrics.ts';

/**
 * The runner's metrics, on the registry of the process it lives in (so they show on that process's one `/metrics`,
 * whatever the role). The session gauge is computed from the store when scraped, so it can never drift from the truth.
 */
export interface RunnerMetrics {
  sessionCreated(): void;
  runStarted(): void;
  runFinished(status: 'ok' | 'error' | 'cancelled'): void;
  eventForwarded(): void;
}

export function createRunnerMetrics(metrics: Metrics, sessionsByStatus: () => Iterable<SessionStatus>): RunnerMetrics {
  metrics.gauge({
    name: 'svc_runner_sessions',
    help: 'Sessions held by this runner, by status.',
    labels: ['status'],
    collect(set) {
      const counts = Object.fromEntries(Object.keys(SESSION_STATUS_CODES).map((s) => [s, 0])) as Record<SessionStatus, number>;
      for (const status of sessionsByStatus()) counts[status]++;
      for (const [status, n] of Object.entries(counts)) set({ status }, n);
    },
  });
  const created = metrics.counter({ name: 'svc_runner_sessions_created_total', help: 'Sessions created or hydrated.' });
  const started = metrics.counter({ name: 'svc_runner_runs_started_total', help: 'Runs started.' });
  const finished = metrics.counter({
    name: 'svc_runner_runs_finished_total',
    help: 'Runs finished, by outcome.',
    labels: ['status'],
    initial: [{ status: 'ok' }, { status: 'error' }, { status: 'cancelled' }],
  });
  const forwarded = metrics.counter({ name: 'svc_runner_events_forwarded_total', help: 'Run events forwarded to callers.' });
  return {
    sessionCreated: () => created.inc(),
    runStarted: () => started.inc(),
    runFinished: (status) => finished.inc({ status }),
    eventForwarded: () => forwarded.inc(),
  };
}
