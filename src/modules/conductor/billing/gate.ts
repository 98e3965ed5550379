import type { Kysely } from 'kysely';
import type { DB } from '../../../db/index.ts';
import { readWithNext, withTenantStatement, type Tx } from '../../../db/index.ts';
import { AppError, describeError } from '../../../shared/errors.ts';
import type { Logger } from '../../../shared/log.ts';
import type { RunGate, RunGateContext } from '../hooks/index.ts';
import { gateFiguresQuery, toGateFigures, type GateFiguresRow } from './ledger.repo.ts';
import { isFreeModel } from './model-prices.ts';
import { capWindows, spendCapOf, type CapDefaults, type SpendCap } from './spend-cap.service.ts';

/**
 * The credit gate (seed 000 "Runs" rule 6, variant B), asked by the run service before any session or sandbox is
 * allocated, on every path that starts model work (POST /api/runs, /v1 turns, delegated sub-runs).
 *
 * Only work that draws platform credit is gated: a model on the operator's key (`svc/<aggregator>/…` models and
 * profiles on the server's provider keys). A tenant's own provider key meters but never needs credit, and the
 * built-in demo model is free. Refusals are 402 with the seed's body: `credits_exhausted` (balance at or below zero),
 * `credit_check_unavailable` (the ledger could not be read), `spend_cap_reached` (month or day window spent).
 *
 * Overshoot bound: the gate reads the balance and the caps; it reserves nothing for runs already admitted (their cost
 * is known only when they end). So a tenant can go below zero, or past a cap, by at most the cost of the runs that
 * were in flight when the balance or the window ran out: every run the gate admitted had a positive balance and an
 * unspent window at its start, and no run starts after that. A run in flight always finishes and is charged in full.
 */
export interface GateDeps {
  db: Kysely<DB>;
  defaults: CapDefaults;
  log: Logger;
  /** Told when a spend cap refuses a run (the webhook outbox's billing.spend_cap_reached, once per window). */
  capReached?: (tenantId: string, window: 'month' | 'day', w: { limit_usd_cents: number; spent_usd_cents: number; resets_at: string }) => Promise<void>;
}

const usd = (micro: number) => `$${(micro / 1_000_000).toFixed(2)}`;

export function drawsPlatformCredit(ctx: Pick<RunGateContext, 'keySource' | 'model'>): boolean {
  return ctx.keySource === 'platform' && !(ctx.model && isFreeModel(ctx.model));
}

/** The gate's figures read ahead (readGateAhead). */
export type GateAhead = { rows: Promise<GateFiguresRow[]>; now: Date };

/**
 * The gate's figures held to go in one write with the transaction's next statement: the run service reads them with
 * the run's profile (the run hooks' readAhead), so the gate costs no round trip of its own. Read whether or not the
 * run will draw platform credit (that is known from the profile only).
 */
export async function readGateAhead(tx: Tx, _tenantId: string): Promise<GateAhead> {
  const now = new Date();
  const { monthStart, dayStart } = capWindows(now);
  return { ...(await readWithNext(tx, gateFiguresQuery(monthStart, dayStart))), now };
}

/** `ahead`: the figures as read ahead (readGateAhead); otherwise the gate reads them, in one statement. */
export function creditGate(deps: GateDeps): RunGate {
  return async (ctx, ahead) => {
    if (!drawsPlatformCredit(ctx)) return;
    let balance: number;
    let cap: SpendCap;
    try {
      const given = ahead as GateAhead | undefined;
      const now = given?.now ?? new Date();
      const { monthStart, dayStart } = capWindows(now);
      const rows = given ? await given.rows : (await withTenantStatement(deps.db, ctx.tenantId, (tx) => gateFiguresQuery(monthStart, dayStart).execute(tx))).rows;
      const figures = toGateFigures(rows[0]);
      balance = figures.balanceMicroUsd;
      cap = spendCapOf(figures.cap, figures.monthSpentMicroUsd, figures.daySpentMicroUsd, deps.defaults, now);
    } catch (err) {
      deps.log.warn('credit check failed', { tenantId: ctx.tenantId, error: describeError(err) });
      throw refusal('credit_check_unavailable', 0, 'The credit balance could not be checked; try again shortly.');
    }
    if (balance <= 0) throw refusal('credits_exhausted', balance, `Credits exhausted: the balance is ${usd(balance)}. Add credit to start new runs.`);
    // the month first: the day's limit is never above the month's, so a spent month reads as the month's cap
    for (const window of ['month', 'day'] as const) {
      const w = cap[window];
      if (w.limit_usd_cents === null || w.spent_usd_cents < w.limit_usd_cents) continue;
      await deps.capReached?.(ctx.tenantId, window, { ...w, limit_usd_cents: w.limit_usd_cents }).catch((err: unknown) => deps.log.warn('reporting a reached spend cap failed', { tenantId: ctx.tenantId, error: describeError(err) }));
      throw new AppError(402, `Spend cap reached: ${window === 'day' ? 'daily' : 'monthly'} limit of $${(w.limit_usd_cents / 100).toFixed(2)} spent; it resets at ${w.resets_at}.`, {
        code: 'spend_cap_reached',
        extra: {
          error: 'spend_cap_reached',
          scope: 'tenant',
          window,
          limit_usd_cents: w.limit_usd_cents,
          spent_usd_cents: w.spent_usd_cents,
          resets_at: w.resets_at,
          balance_micro_usd: balance,
          message: `The ${window === 'day' ? 'daily' : 'monthly'} spend cap of $${(w.limit_usd_cents / 100).toFixed(2)} is reached; it resets at ${w.resets_at}.`,
        },
      });
    }
  };
}

function refusal(error: 'credits_exhausted' | 'credit_check_unavailable', balance: number, message: string): AppError {
  return new AppError(402, message, { code: error, extra: { error, scope: 'tenant', balance_micro_usd: balance, message } });
}
