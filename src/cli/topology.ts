import { defineCommand } from 'citty';
import { globalArgs } from './args.ts';
import { notFoundError } from './client/exit.ts';
import { ApiError } from './client/http.ts';
import { openSession } from './client/session.ts';

interface RunnerView {
  hash: string | null;
  url: string;
  healthy: boolean;
  latencyMs: number | null;
  activeSessions: number | null;
  error: string | null;
  capabilities: string[];
}

/** `svc topology`: the conductor's runners. A single-runner conductor answers 404: reported as not found (4). */
export default defineCommand({
  meta: { name: 'topology', description: "Show the conductor's runners and their health" },
  args: { ...globalArgs },
  async run({ args }) {
    const { out, api } = openSession(args, { needKey: true });
    let runners: RunnerView[];
    try {
      runners = (await api.get<{ runners: RunnerView[] }>('/api/topology')).runners;
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) throw notFoundError(`not found: ${api.baseUrl} has no topology (${err.message})`);
      throw err;
    }
    if (out.json) return out.data(runners);
    out.rows(runners.map((r) => [r.hash, r.url, r.healthy ? 'healthy' : 'unhealthy', r.latencyMs === null ? null : `${r.latencyMs}ms`, r.activeSessions, r.error, r.capabilities.join(',') || null]), ['hash', 'url', 'health', 'latency', 'sessions', 'error', 'capabilities']);
  },
});
