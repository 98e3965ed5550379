import { defineCommand } from 'citty';
import { globalArgs } from './args.ts';
import { openSession } from './client/session.ts';

interface ModelUsage {
  model: string;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  costMicroUsd: number;
  priced: boolean;
}
interface Usage {
  since: string | null;
  inputTokens: number;
  outputTokens: number;
  costMicroUsd: number;
  costUsd: number;
  byModel: ModelUsage[];
}

const usd = (micro: number) => `$${(micro / 1_000_000).toFixed(4)}`;

/** `svc usage`: this month's (UTC) usage totals by model, with cost; an unpriced model says so instead of $0. */
export default defineCommand({
  meta: { name: 'usage', description: "Show this month's usage by model" },
  args: { ...globalArgs },
  async run({ args }) {
    const { out, api } = openSession(args, { needKey: true });
    const now = new Date();
    const since = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString();
    const u = await api.get<Usage>(`/api/usage?since=${encodeURIComponent(since)}`);
    if (out.json) return out.data(u);
    out.rows([
      ['model', 'input', 'output', 'cache read', 'cost'],
      ...u.byModel.map((m) => [m.model, m.inputTokens, m.outputTokens, m.cacheReadTokens, m.priced ? usd(m.costMicroUsd) : 'unpriced']),
      ['total', u.inputTokens, u.outputTokens, '', usd(u.costMicroUsd)],
    ]);
  },
});
