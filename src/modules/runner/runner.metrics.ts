import { SESSION_STATUS_CODES, type SessionStatus } from '../../contracts/runner.ts';

/**
 * Runner counters for `/metrics` (Prometheus text format). Counters only ever grow; the session gauge is computed from
 * the store when scraped, so it can never drift from the truth.
 */
export interface RunnerMetrics {
  sessionCreated(): void;
  runStarted(): void;
  runFinished(status: 'ok' | 'error' | 'cancelled'): void;
  eventForwarded(): void;
  render(sessionsByStatus: Record<SessionStatus, number>): string;
}

export function createRunnerMetrics(): RunnerMetrics {
  let sessionsCreated = 0;
  let runsStarted = 0;
  let eventsForwarded = 0;
  const runsFinished = { ok: 0, error: 0, cancelled: 0 };

  return {
    sessionCreated: () => void sessionsCreated++,
    runStarted: () => void runsStarted++,
    runFinished: (status) => void runsFinished[status]++,
    eventForwarded: () => void eventsForwarded++,
    render(sessionsByStatus) {
      const lines = [
        '# HELP svc_runner_sessions Sessions held by this runner, by status.',
        '# TYPE svc_runner_sessions gauge',
        ...Object.keys(SESSION_STATUS_CODES).map((s) => `svc_runner_sessions{status="${s}"} ${sessionsByStatus[s as SessionStatus] ?? 0}`),
        '# HELP svc_runner_sessions_created_total Sessions created or hydrated.',
        '# TYPE svc_runner_sessions_created_total counter',
        `svc_runner_sessions_created_total ${sessionsCreated}`,
        '# HELP svc_runner_runs_started_total Runs started.',
        '# TYPE svc_runner_runs_started_total counter',
        `svc_runner_runs_started_total ${runsStarted}`,
        '# HELP svc_runner_runs_finished_total Runs finished, by outcome.',
        '# TYPE svc_runner_runs_finished_total counter',
        ...Object.entries(runsFinished).map(([s, n]) => `svc_runner_runs_finished_total{status="${s}"} ${n}`),
        '# HELP svc_runner_events_forwarded_total Run events forwarded to callers.',
        '# TYPE svc_runner_events_forwarded_total counter',
        `svc_runner_events_forwarded_total ${eventsForwarded}`,
      ];
      return lines.join('\n') + '\n';
    },
  };
}
