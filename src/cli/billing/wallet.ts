import { defineCommand } from 'citty';
import { globalArgs } from '../args.ts';
import { formatUsd } from '../client/amount.ts';
import { openSession } from '../client/session.ts';

interface Wallet {
  configured: boolean;
  balanceMicroUSD: number;
  balanceUSD: number;
  packs: Array<{ cents: number; usd: number }>;
  plan?: { name: string; status: string } | null;
  machineTime?: { usedSeconds: number; includedSeconds: number | null };
}

/**
 * `svc billing wallet`: the credit balance and the packs on sale; `configured: false` means never granted credit.
 * `--json` keeps to the seed's fields; the plain output adds the plan and machine time where the server reports them.
 */
export default defineCommand({
  meta: { name: 'wallet', description: 'Show the credit balance and packs' },
  args: { ...globalArgs },
  async run({ args }) {
    const { out, api } = openSession(args, { needKey: true });
    const w = await api.get<Wallet>('/api/billing/wallet');
    const shown = { configured: w.configured, balanceMicroUSD: w.balanceMicroUSD, balanceUSD: w.balanceUSD, packs: (w.packs ?? []).map((p) => ({ cents: p.cents, usd: p.usd })) };
    if (out.json) return out.data(shown);
    out.fields([
      ['configured', shown.configured ? 'yes' : 'no (never granted credit)'],
      ['balance', `${formatUsd(shown.balanceMicroUSD / 10_000)} (${shown.balanceMicroUSD} micro-USD)`],
      ['packs', shown.packs.map((p) => formatUsd(p.cents)).join(', ') || null],
      ['plan', w.plan ? `${w.plan.name} (${w.plan.status})` : null],
      ['machine time', w.machineTime ? `${minutes(w.machineTime.usedSeconds)}${w.machineTime.includedSeconds === null ? '' : ` of ${minutes(w.machineTime.includedSeconds)}`}` : null],
    ]);
  },
});

const minutes = (seconds: number) => `${Math.round(seconds / 60)} min`;
