import { defineCommand } from 'citty';
import { globalArgs } from '../args.ts';
import { formatUsd } from '../client/amount.ts';
import type { Output } from '../client/output.ts';
import { openSession } from '../client/session.ts';
import type { CapWindow, SpendCap } from '../../contracts/billing.ts';
export type { CapWindow, SpendCap } from '../../contracts/billing.ts';


const windowOf = (w: CapWindow): CapWindow => ({
  limit_usd_cents: w.limit_usd_cents,
  limit_usd: w.limit_usd,
  spent_usd_cents: w.spent_usd_cents,
  spent_usd: w.spent_usd,
  remaining_usd_cents: w.remaining_usd_cents,
  user_set: w.user_set,
  resets_at: w.resets_at,
});

/** Prints a spend cap: the JSON document, or labelled lines and one row per window. Shared with `cap set`. */
export function printCap(out: Output, cap: SpendCap): void {
  const shown: SpendCap = { enabled: cap.enabled, month: windowOf(cap.month), day: windowOf(cap.day), billing_email: cap.billing_email ?? null };
  if (out.json) return out.data(shown);
  out.fields([
    ['enabled', shown.enabled ? 'yes' : 'no'],
    ['billing_email', shown.billing_email],
  ]);
  out.rows(
    (['month', 'day'] as const).map((name) => {
      const w = shown[name];
      return [name, `limit ${formatUsd(w.limit_usd_cents)}${w.user_set ? '' : ' (default)'}`, `spent ${formatUsd(w.spent_usd_cents)}`, `remaining ${formatUsd(w.remaining_usd_cents)}`, `resets ${w.resets_at}`];
    }),
  );
}

/** `svc billing cap`: the monthly and daily spend windows (GET /api/spend-cap). `svc billing cap set` changes it. */
export default defineCommand({
  meta: { name: 'cap', description: 'Show the spend cap (`cap set <amount>` changes it)' },
  args: { ...globalArgs },
  subCommands: { set: () => import('./cap-set.ts').then((m) => m.default) },
  async run({ args, rawArgs }) {
    // citty runs a parent's `run` after its subcommand too; `cap set` has already done the work.
    if (rawArgs.find((a) => !a.startsWith('-')) === 'set') return;
    const { out, api } = openSession(args, { needKey: true });
    printCap(out, await api.get<SpendCap>('/api/spend-cap'));
  },
});
