/**
 * A minimal Prometheus text registry: labelled counters plus collector callbacks that modules register for their own
 * gauges. Enough for /metrics on every role without a metrics dependency.
 */
export interface Metrics {
  inc(name: string, labels?: Record<string, string>, by?: number): void;
  collect(fn: () => string): void;
  render(): string;
}

export function createMetrics(): Metrics {
  const counters = new Map<string, Map<string, number>>();
  const collectors: Array<() => string> = [];
  const labelKey = (labels?: Record<string, string>) =>
    labels && Object.keys(labels).length
      ? '{' + Object.entries(labels).map(([k, v]) => `${k}="${String(v).replace(/["\\\n]/g, '_')}"`).join(',') + '}'
      : '';
  return {
    inc(name, labels, by = 1) {
      let series = counters.get(name);
      if (!series) counters.set(name, (series = new Map()));
      const key = labelKey(labels);
      series.set(key, (series.get(key) ?? 0) + by);
    },
    collect(fn) {
      collectors.push(fn);
    },
    render() {
      const mem = process.memoryUsage();
      const cpu = process.cpuUsage();
      let out = '';
      out += `# TYPE process_resident_memory_bytes gauge\nprocess_resident_memory_bytes ${mem.rss}\n`;
      out += `# TYPE nodejs_heap_used_bytes gauge\nnodejs_heap_used_bytes ${mem.heapUsed}\n`;
      out += `# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total ${(cpu.user + cpu.system) / 1e6}\n`;
      out += `# TYPE process_uptime_seconds gauge\nprocess_uptime_seconds ${process.uptime()}\n`;
      for (const [name, series] of counters) {
        out += `# TYPE ${name} counter\n`;
        for (const [labels, value] of series) out += `${name}${labels} ${value}\n`;
      }
      for (const fn of collectors) out += fn();
      return out;
    },
  };
}
