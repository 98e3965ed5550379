import { defineCommand } from 'citty';
import { globalArgs, yesArg } from '../args.ts';
import { formatUsd, parseCapAmount } from '../client/amount.ts';
import { usageError } from '../client/exit.ts';
import { confirm } from '../client/prompt.ts';
import { openSession } from '../client/session.ts';
import { printCap, type SpendCap } from './cap.ts';

/**
 * `svc billing cap set <amount>`: sets the monthly cap (PUT /api/spend-cap). The amount is validated before any
 * request (exit 2); `default`/`none`/`clear` revert to the system default. A terminal confirms; a script needs --yes.
 * A cap below this month's spend draws a warning; a failed pre-read of the current spend does not block.
 */
export default defineCommand({
  meta: { name: 'set', description: 'Set the monthly spend cap (dollars, or "default")' },
  args: {
    ...globalArgs,
    ...yesArg,
    amount: { type: 'positional', required: false, description: 'dollars: 10, 10.50, $10, 1,000; or default | none | clear' },
    window: { type: 'string', description: 'the window to set: month (the daily window cannot be set)', default: 'month', valueHint: 'month' },
  },
  async run({ args, rawArgs }) {
    // `-5` reads as a flag to the argument parser; take it as the (refused) amount it was meant to be.
    const rawAmount = (args.amount as string | undefined) ?? rawArgs.find((a) => /^-[\d.$,]/.test(a));
    if (rawAmount === undefined) throw usageError('billing cap set: an amount is required (dollars like 10 or 10.50, or "default")');
    if (args.window !== 'month') {
      throw usageError(args.window === 'day' ? 'the daily window cannot be set: it follows the system default' : `--window: expected month, got "${args.window}"`);
    }
    const amount = parseCapAmount(rawAmount);
    const { env, out, api } = openSession(args, { needKey: true });
    const interactive = env.stdinTTY && env.stdoutTTY;
    if (!args.yes && !interactive) throw usageError('billing cap set: --yes is required when not in a terminal');

    let current: SpendCap | undefined;
    try {
      current = await api.get<SpendCap>('/api/spend-cap', { timeoutMs: 10_000 });
    } catch (err) {
      out.log.warn(`could not read the current spend (${err instanceof Error ? err.message : String(err)}); setting the cap anyway`);
    }
    const label = amount.kind === 'default' ? 'the system default' : formatUsd(amount.cents);
    if (current && amount.kind === 'cents' && amount.cents < current.month.spent_usd_cents) {
      out.log.warn(`the new cap ${label} is below the ${formatUsd(current.month.spent_usd_cents)} already spent this month: spending stops until ${current.month.resets_at}`);
    }
    if (!args.yes && !(await confirm(`Set the monthly spend cap to ${label}?`, false))) {
      out.log.info('cancelled: the cap is unchanged');
      return;
    }
    const { data } = await api.request<SpendCap>('PUT', '/api/spend-cap', { body: { limit_usd_cents: amount.kind === 'default' ? null : amount.cents } });
    out.log.success(`monthly spend cap set to ${label}`);
    printCap(out, data);
  },
});
