import { withTenant } from '../../../db/index.ts';
import { badRequest } from '../../../shared/errors.ts';
import type { PublishingDeps } from './published.service.ts';
import { activeOf } from './published.service.ts';
import { countConversations, selectMetricBuckets, selectTenantBuckets } from './publishing.repo.ts';

/**
 * Published-agent metrics (seed 000): the agent's gateway runs over a window, in buckets. `requests` and
 * `ingressRequests` count the chat turns the gateway accepted (refused requests start no run); `sandboxSeconds` and
 * `failedRuns` are always 0 in this per-agent view, as the seed says.
 */
const WINDOWS: Record<string, { seconds: number; bucket: string; bucketSeconds: number }> = {
  '1h': { seconds: 3600, bucket: '5m', bucketSeconds: 300 },
  '24h': { seconds: 86_400, bucket: '1h', bucketSeconds: 3600 },
  '7d': { seconds: 7 * 86_400, bucket: '6h', bucketSeconds: 6 * 3600 },
  '30d': { seconds: 30 * 86_400, bucket: '1d', bucketSeconds: 86_400 },
};

const cents = (micro: number) => Math.round(micro / 100) / 100;

/** The window's buckets end on a bucket boundary, the last one holding now. */
function windowOf(window: string, now: Date) {
  const w = WINDOWS[window];
  if (!w) throw badRequest(`window: one of ${Object.keys(WINDOWS).join(', ')}`);
  const until = new Date(Math.ceil((now.getTime() + 1) / (w.bucketSeconds * 1000)) * w.bucketSeconds * 1000);
  return { ...w, until, since: new Date(until.getTime() - w.seconds * 1000) };
}

/**
 * `GET /api/stats?window=…`: every run of the tenant in the same buckets. `failedRuns` counts runs that ended in
 * error, `queuedRuns` those waiting on a busy session, `ingressRequests` the chat gateway's accepted turns; `sandboxSeconds` is 0 until sandbox time is metered.
 */
export async function tenantStats(deps: PublishingDeps, tenantId: string, window = '1h', now = new Date()) {
  const { since, until, bucket, bucketSeconds } = windowOf(window, now);
  const rows = await withTenant(deps.db, tenantId, (tx) => selectTenantBuckets(tx, since, until, bucketSeconds));
  return {
    window,
    since: since.toISOString(),
    until: until.toISOString(),
    bucket,
    buckets: rows.map((r) => ({
      start: new Date(r.start).toISOString(),
      end: new Date(r.end).toISOString(),
      runs: Number(r.runs),
      failedRuns: Number(r.failed),
      runningRuns: Number(r.running),
      /** Runs waiting on a busy session (multitask enqueue or interrupt). */
      queuedRuns: Number(r.queued),
      /** Running runs that wait for a person's approval (not counted in runningRuns). */
      waitingRuns: Number(r.waiting),
      tokens: Number(r.input),
      costCents: cents(Number(r.cost_micro)),
      sandboxSeconds: 0,
      ingressRequests: Number(r.ingress),
    })),
  };
}

export async function agentMetrics(deps: PublishingDeps, tenantId: string, profile: string, window = '1h', now = new Date()) {
  const w = windowOf(window, now);
  const { since, until } = w;
  return withTenant(deps.db, tenantId, async (tx) => {
    const agent = await activeOf(tx, profile);
    const rows = await selectMetricBuckets(tx, agent.id, since, until, w.bucketSeconds);
    const conversations = await countConversations(tx, agent.id, since, until);
    const tokens = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheCreateTokens: 0 };
    let runs = 0;
    let costMicro = 0;
    const buckets = rows.map((r) => {
      const t = { input: Number(r.input), output: Number(r.output) };
      tokens.inputTokens += t.input;
      tokens.outputTokens += t.output;
      tokens.cacheReadTokens += Number(r.cache_read);
      tokens.cacheCreateTokens += Number(r.cache_create);
      runs += Number(r.runs);
      costMicro += Number(r.cost_micro);
      return {
        start: new Date(r.start).toISOString(),
        end: new Date(r.end).toISOString(),
        runs: Number(r.runs),
        failedRuns: 0,
        runningRuns: Number(r.running),
        tokens: t.input + t.output,
        costCents: cents(Number(r.cost_micro)),
        sandboxSeconds: 0,
        ingressRequests: Number(r.runs),
      };
    });
    return {
      window,
      since: since.toISOString(),
      until: until.toISOString(),
      bucket: w.bucket,
      totals: { requests: runs, runs, conversations, costCents: cents(costMicro), tokens: tokens.inputTokens + tokens.outputTokens },
      tokens,
      buckets,
    };
  });
}
