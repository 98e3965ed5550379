import type { Kysely } from 'kysely';
import type { DB } from '../../../db/index.ts';
import type { BillingConfig } from '../../../config/billing.config.ts';
import type { Logger } from '../../../shared/log.ts';
import type { Metrics } from '../../../shared/metrics.ts';
import type { RunHooks } from '../hooks/index.ts';
import { createCharger } from './charge.service.ts';
import { creditGate } from './gate.ts';
import type { CapDefaults } from './spend-cap.service.ts';

/**
 * Billing's attachment to the run hooks, in `ledger` and `stripe` modes: the credit gate, and the `billing`
 * runFinished subscriber that prices every run and charges the platform-credit ones. In `off` mode neither: usage is
 * still metered and priced where it is read (`/api/usage`), and runs pay no hook job for a charge that never happens.
 */
export function billingGate(deps: { db: Kysely<DB>; hooks: RunHooks; billing: BillingConfig; defaults: CapDefaults; log: Logger }): void {
  if (deps.billing.mode !== 'off') deps.hooks.gate(creditGate({ db: deps.db, defaults: deps.defaults, log: deps.log }));
}

export async function attachBilling(deps: { db: Kysely<DB>; hooks: RunHooks; billing: BillingConfig; metrics: Metrics; log: Logger }): Promise<void> {
  if (deps.billing.mode === 'off') return;
  const charge = createCharger({ db: deps.db, mode: deps.billing.mode, metrics: deps.metrics, log: deps.log });
  await deps.hooks.onRunFinished('billing', async (run) => void (await charge(run)));
}
