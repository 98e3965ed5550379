import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, openDatabase, withOperator, type Database } from '../../../db/index.ts';
import { server } from '../../../../test/support/backends.ts';
import { createLogger } from '../../../shared/log.ts';
import { AppError } from '../../../shared/errors.ts';
import type { RunGateContext } from '../hooks/index.ts';
import { creditGate } from './gate.ts';
import { chargeCredit, grantCredit } from './wallet.service.ts';

/**
 * The credit gate on its own, against a real database: the operator's daily default window, who is never gated
 * (a tenant's own key, the free demo model), and a ledger that cannot be read (402 credit_check_unavailable).
 */
const ctx = (over: Partial<RunGateContext> = {}): RunGateContext => ({ tenantId: 'gate-t', profile: 'p', parentId: null, sessionId: null, runtime: 'general', model: 'openai:gpt-4o', keySource: 'platform', ...over });
const log = createLogger('billing-test');

async function refusal(p: Promise<void> | void): Promise<{ status: number; body: Record<string, unknown> } | undefined> {
  try {
    await p;
    return undefined;
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    return { status: err.status, body: { ...err.extra } };
  }
}

describe('the credit gate', () => {
  let database: Database;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    const db = await server.setup();
    cleanup = db.cleanup;
    database = await openDatabase({ url: db.url, dataDir: '/nonexistent' });
    await migrate(database);
    await withOperator(database.db, (tx) => tx.insertInto('tenants').values({ id: 'gate-t', name: 'gate-t' }).execute());
  });
  afterAll(async () => {
    await database?.close();
    await cleanup?.();
  });

  it('refuses with the daily window once the operator default is spent, and lets own keys and the demo model through', async () => {
    const gate = creditGate({ db: database.db, defaults: { monthCapCents: 10_000, dayCapCents: 100 }, log });
    await grantCredit(database.db, { tenantId: 'gate-t', amountMicroUsd: 50_000_000, description: 'test', createdBy: null });
    expect(await refusal(gate(ctx()))).toBeUndefined();
    await chargeCredit(database.db, { tenantId: 'gate-t', amountMicroUsd: 1_000_000, description: 'a dollar of usage', runId: 'run-1' });
    const now = new Date();
    const tomorrow = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1)).toISOString();
    expect(await refusal(gate(ctx()))).toEqual({
      status: 402,
      body: { error: 'spend_cap_reached', scope: 'tenant', window: 'day', limit_usd_cents: 100, spent_usd_cents: 100, resets_at: tomorrow, balance_micro_usd: 49_000_000, message: expect.stringMatching(/daily spend cap of \$1\.00/) },
    });
    expect(await refusal(gate(ctx({ keySource: 'tenant' })))).toBeUndefined();
    expect(await refusal(gate(ctx({ model: 'demo:echo' })))).toBeUndefined();
  });

  it('answers credit_check_unavailable when the ledger cannot be read', async () => {
    const db = await server.setup();
    const gone = await openDatabase({ url: db.url, dataDir: '/nonexistent' });
    await migrate(gone);
    await gone.close();
    await db.cleanup(); // the database is gone: every read of the ledger fails
    const gate = creditGate({ db: gone.db, defaults: { monthCapCents: 0, dayCapCents: 0 }, log });
    expect(await refusal(gate(ctx()))).toEqual({ status: 402, body: { error: 'credit_check_unavailable', scope: 'tenant', balance_micro_usd: 0, message: expect.any(String) } });
  });
});
