import type { Usage } from '../../../contracts/run-event.ts';
import type { Metrics } from '../../../shared/metrics.ts';

/**
 * The conductor's run metrics: runs started and finished by status, run duration and time to first event, tokens by
 * direction (from the runtimes' `usage` events) and cost. Cost stays 0 until billing prices runs: the counter exists so
 * dashboards and alerts can be written against its name now.
 */
export interface RunMetrics {
  started(): void;
  firstEvent(seconds: number): void;
  usage(usage: Usage): void;
  finished(status: string, seconds: number, costUsd?: number): void;
}

const RUN_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600];
const FIRST_EVENT_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const STATUSES = ['ok', 'error', 'cancelled', 'interrupted'].map((status) => ({ status }));

const cache = new WeakMap<Metrics, RunMetrics>();

/** The run metrics on `metrics`' registry (made once per registry). */
export function runMetrics(metrics: Metrics): RunMetrics {
  let m = cache.get(metrics);
  if (!m) cache.set(metrics, (m = create(metrics)));
  return m;
}

function create(metrics: Metrics): RunMetrics {
  const started = metrics.counter({ name: 'svc_runs_started_total', help: 'Runs this conductor started.' });
  const finished = metrics.counter({ name: 'svc_runs_finished_total', help: 'Runs this conductor drove to their end, by status.', labels: ['status'], initial: STATUSES });
  const duration = metrics.histogram({ name: 'svc_run_duration_seconds', help: 'Run duration from start to its terminal event, by status.', labels: ['status'], buckets: RUN_BUCKETS });
  const firstEvent = metrics.histogram({ name: 'svc_run_first_event_seconds', help: 'Time from a run\'s start to its first event.', buckets: FIRST_EVENT_BUCKETS });
  const tokens = metrics.counter({ name: 'svc_run_tokens_total', help: 'Model tokens used by runs, by direction.', labels: ['direction'], initial: [{ direction: 'input' }, { direction: 'output' }] });
  const cost = metrics.counter({ name: 'svc_run_cost_usd_total', help: 'Cost of runs in USD (0 until billing prices runs).' });
  return {
    started: () => started.inc(),
    firstEvent: (seconds) => firstEvent.observe({}, seconds),
    usage(u) {
      if (u.inputTokens > 0) tokens.inc({ direction: 'input' }, u.inputTokens);
      if (u.outputTokens > 0) tokens.inc({ direction: 'output' }, u.outputTokens);
    },
    finished(status, seconds, costUsd = 0) {
      finished.inc({ status });
      duration.observe({ status }, seconds);
      if (costUsd > 0) cost.inc({}, costUsd);
    },
  };
}
