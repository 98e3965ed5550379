import type { Kysely } from 'kysely';
import type { DB } from '../../../db/index.ts';
import type { BillingMode } from '../../../config/billing.config.ts';
import type { Logger } from '../../../shared/log.ts';
import type { Metrics } from '../../../shared/metrics.ts';
import type { RunFinished } from '../hooks/index.ts';
import { drawsPlatformCredit } from './gate.ts';
import { priceTokens, type Priced } from './model-prices.ts';
import { chargeCredit, type LowCredit } from './wallet.service.ts';

/**
 * Charging, as billing's `runFinished` subscriber (in `ledger` and `stripe` modes): the run's usage is priced from the
 * model price catalog and, when the run drew platform credit, charged to the ledger. Delivery is at least once (the
 * hook retries a failed handler), and the ledger holds one charge per run (a unique index on tenant and run), so a
 * retried or replayed end never charges twice. An unpriced model is counted (`svc_usage_unpriced_total`) and logged,
 * and charges nothing rather than a made-up price.
 */
export interface ChargeDeps {
  db: Kysely<DB>;
  mode: BillingMode;
  metrics: Metrics;
  log: Logger;
  /** The low-credit notification (wallet.service.ts). */
  lowCredit?: LowCredit;
}

export interface ChargeOutcome {
  price: Priced;
  /** Micro-USD written to the ledger by this call (0 when nothing was due, or the run was charged before). */
  charged: number;
}

export function createCharger(deps: ChargeDeps): (run: RunFinished) => Promise<ChargeOutcome> {
  const unpriced = deps.metrics.counter({ name: 'svc_usage_unpriced_total', help: 'Finished runs whose model has no known price, by model.', labels: ['model'] });
  const cost = deps.metrics.counter({ name: 'svc_run_cost_usd_total', help: 'Cost of runs in USD (0 until billing prices runs).' });
  const charges = deps.metrics.counter({ name: 'svc_billing_charged_micro_usd_total', help: 'Micro-USD charged to tenant ledgers for platform-credit runs.' });
  return async (run) => {
    const tokens = run.usage;
    const used = tokens.input + tokens.output + tokens.cacheRead + tokens.cacheWrite > 0;
    const price = priceTokens(run.cost.model, run.cost.runtime, tokens);
    if (!price.priced) {
      if (used) {
        unpriced.inc({ model: run.cost.model ?? 'unknown' });
        deps.log.warn('run usage is unpriced', { runId: run.runId, tenantId: run.tenantId, model: run.cost.model, tokens });
      }
      return { price, charged: 0 };
    }
    const platform = drawsPlatformCredit({ keySource: run.cost.keySource ?? 'platform', model: run.cost.model });
    if (deps.mode === 'off' || !platform || price.costMicroUsd <= 0) {
      if (price.costMicroUsd > 0) cost.inc({}, price.costMicroUsd / 1e6);
      return { price, charged: 0 };
    }
    const description = `run ${run.runId}: ${run.cost.model} (${tokens.input} in, ${tokens.output} out, ${tokens.cacheRead} cache read, ${tokens.cacheWrite} cache write)`;
    const inserted = await chargeCredit(deps.db, { tenantId: run.tenantId, amountMicroUsd: price.costMicroUsd, description, runId: run.runId }, deps.lowCredit);
    if (inserted) {
      cost.inc({}, price.costMicroUsd / 1e6);
      charges.inc({}, price.costMicroUsd);
    }
    return { price, charged: inserted ? price.costMicroUsd : 0 };
  };
}
