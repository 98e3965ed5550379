import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * The metrics every module feeds: one registry per svc instance (`buildApp` makes it and serves it on `/metrics`),
 * handed to modules as a dependency so none of them touches prom-client's global registry. Tests run several svc
 * instances in one process; each keeps its own counters.
 *
 * prom-client was chosen over a hand-written text registry because it gets the exposition format, histogram buckets
 * and the standard process/Node.js metrics (`process_cpu_seconds_total`, `nodejs_eventloop_lag_seconds`, GC, heap
 * spaces…) right under the names dashboards expect; it is the de facto Node.js Prometheus client.
 */
export type Labels<L extends string> = Partial<Record<L, string | number>>;

export interface CounterOf<L extends string> {
  inc(labels?: Labels<L>, by?: number): void;
}

export interface HistogramOf<L extends string> {
  /** Records one value (seconds for durations, by Prometheus convention). */
  observe(labels: Labels<L>, value: number): void;
}

export interface MetricSpec<L extends string> {
  name: string;
  help: string;
  labels?: readonly L[];
}

export interface Metrics {
  /** A counter; asking twice for one name returns the same counter (two modules may count into it). */
  counter<L extends string = never>(spec: MetricSpec<L> & { initial?: Labels<L>[] }): CounterOf<L>;
  histogram<L extends string = never>(spec: MetricSpec<L> & { buckets?: number[] }): HistogramOf<L>;
  /** A gauge read when scraped: `collect` sets its current values, so it never drifts from the truth it reads. */
  gauge<L extends string = never>(spec: MetricSpec<L> & { collect(set: (labels: Labels<L>, value: number) => void): void | Promise<void> }): void;
  /** The Prometheus text exposition of this instance's metrics and the process's standard ones. */
  render(): Promise<string>;
  readonly contentType: string;
}

/** Latency buckets (seconds) for HTTP requests: 5 ms … 30 s. */
export const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

let processRegistry: Registry | undefined;

/**
 * The standard process and Node.js metrics describe the process, not an instance, and prom-client's collector
 * installs a GC observer and an event-loop monitor that cannot be removed: collecting them once per process (on a
 * registry of ours, never the library's global one) keeps a process with many instances from stacking observers.
 */
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  const existing = <T>(name: string, kind: new (...args: never[]) => T): T | undefined => {
    const found = registry.getSingleMetric(name);
    if (found && !(found instanceof kind)) throw new Error(`metric ${name} is already registered as another type`);
    return found as T | undefined;
  };
  const clean = <L extends string>(labels: Labels<L> | undefined) => (labels ?? {}) as Partial<Record<L, string | number>>;

  return {
    counter(spec) {
      let c = existing(spec.name, Counter) as Counter<string> | undefined;
      if (!c) {
        c = new Counter({ name: spec.name, help: spec.help, labelNames: [...(spec.labels ?? [])], registers: [registry] });
        // series that should read 0 before their first event (so a rate() sees them start)
        if (spec.initial) for (const l of spec.initial) c.inc(clean(l), 0);
        else if (!spec.labels?.length) c.inc(0);
      }
      const counter = c;
      return { inc: (labels, by = 1) => counter.inc(clean(labels), by) };
    },
    histogram(spec) {
      const h =
        (existing(spec.name, Histogram) as Histogram<string> | undefined) ??
        new Histogram({ name: spec.name, help: spec.help, labelNames: [...(spec.labels ?? [])], buckets: spec.buckets, registers: [registry] });
      return { observe: (labels, value) => h.observe(clean(labels), value) };
    },
    gauge(spec) {
      if (existing(spec.name, Gauge)) throw new Error(`gauge ${spec.name} is already registered`);
      new Gauge({
        name: spec.name,
        help: spec.help,
        labelNames: [...(spec.labels ?? [])],
        registers: [registry],
        async collect() {
          this.reset();
          await spec.collect((labels, value) => this.set(clean(labels), value));
        },
      });
    },
    async render() {
      return (await processMetrics().metrics()) + (await registry.metrics());
    },
    contentType: registry.contentType,
  };
}
