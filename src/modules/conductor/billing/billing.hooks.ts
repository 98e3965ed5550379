import type { Kysely } from 'kysely';
import { withTenant, type DB } from '../../../db/index.ts';
import type { BillingConfig } from '../../../config/billing.config.ts';
import type { Logger } from '../../../shared/log.ts';
import type { Metrics } from '../../../shared/metrics.ts';
import type { RunHooks } from '../hooks/index.ts';
import { createCharger } from './charge.service.ts';
import type { Jobs } from '../jobs/index.ts';
import { emitEvent, requestNotification } from '../notifications/index.ts';
import type { LowCredit } from './wallet.service.ts';
import { creditGate, readGateAhead } from './gate.ts';
import type { CapDefaults } from './spend-cap.service.ts';

/**
 * Billing's attachment to the run hooks, in `ledger` and `stripe` modes: the credit gate, and the `billing`
 * runFinished subscriber that prices every run and charges the platform-credit ones. In `off` mode neither: usage is
 * still metered and priced where it is read (`/api/usage`), and runs pay no hook job for a charge that never happens.
 */
export function billingGate(deps: { db: Kysely<DB>; hooks: RunHooks; jobs: Jobs; billing: BillingConfig; defaults: CapDefaults; log: Logger }): void {
  if (deps.billing.mode === 'off') return;
  // a spent window is reported once (its key names the window and when it resets), however many runs it refuses
  const capReached = (tenantId: string, window: 'month' | 'day', w: { limit_usd_cents: number; spent_usd_cents: number; resets_at: string }) =>
    withTenant(deps.db, tenantId, async (tx) => {
      await emitEvent(deps.jobs, tx, {
        tenantId,
        type: 'billing.spend_cap_reached',
        key: `billing.spend_cap_reached:${window}:${w.resets_at}`,
        data: { window, limitUsdCents: w.limit_usd_cents, spentUsdCents: w.spent_usd_cents, resetsAt: w.resets_at },
      });
    });
  deps.hooks.gate(creditGate({ db: deps.db, defaults: deps.defaults, log: deps.log, capReached }), { readAhead: readGateAhead });
}

export async function attachBilling(deps: { db: Kysely<DB>; hooks: RunHooks; jobs: Jobs; billing: BillingConfig; metrics: Metrics; log: Logger }): Promise<void> {
  if (deps.billing.mode === 'off') return;
  // whole cents as $9.50; anything finer in full, so $9.999968 never reads as $10.00
  const usd = (micro: number) => `$${(micro / 1e6).toFixed(micro % 10_000 === 0 ? 2 : 6)}`;
  const lowCredit: LowCredit = {
    thresholdMicroUsd: deps.billing.lowCreditMicroUsd,
    crossed: (tx, tenantId, balance) =>
      requestNotification(deps.jobs, tx, {
        tenantId,
        event: 'credit.low',
        subject: `svc: credit is below ${usd(deps.billing.lowCreditMicroUsd)}`,
        message: `The credit balance is ${usd(balance)}, below ${usd(deps.billing.lowCreditMicroUsd)}. Runs on the platform's keys stop when it reaches zero; top it up from the billing page or ask your operator.`,
      }),
  };
  const charge = createCharger({ db: deps.db, mode: deps.billing.mode, metrics: deps.metrics, log: deps.log, lowCredit });
  await deps.hooks.onRunFinished('billing', async (run) => void (await charge(run)));
}
