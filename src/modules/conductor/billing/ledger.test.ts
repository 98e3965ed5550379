import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, openDatabase, withOperator, type Database } from '../../../db/index.ts';
import { server } from '../../../../test/support/backends.ts';
import { chargeCredit, getWallet, grantCredit } from './wallet.service.ts';

/**
 * The ledger's one-charge-per-run rule holds however often the same statement runs: PostgreSQL switches a prepared
 * statement to a generic plan after five executions on a connection, and an ON CONFLICT whose partial-index
 * predicate is a bound parameter cannot name the index there (it failed every charge from the sixth on).
 */
describe('the credit ledger', () => {
  let database: Database;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    const db = await server.setup();
    cleanup = db.cleanup;
    database = await openDatabase({ url: db.url, dataDir: '/nonexistent' });
    await migrate(database);
    await withOperator(database.db, (tx) => tx.insertInto('tenants').values({ id: 'ledger-t', name: 'ledger-t' }).execute());
  });
  afterAll(async () => {
    await database?.close();
    await cleanup?.();
  });

  it('charges each run once across many charges, and a repeated charge of a run changes nothing', async () => {
    await grantCredit(database.db, { tenantId: 'ledger-t', amountMicroUsd: 1_000_000, description: 'test', createdBy: null });
    const first: boolean[] = [];
    for (let i = 0; i < 30; i++) first.push(await chargeCredit(database.db, { tenantId: 'ledger-t', amountMicroUsd: 100, description: 'run', runId: `run-${i}` }));
    const again: boolean[] = [];
    for (let i = 0; i < 30; i++) again.push(await chargeCredit(database.db, { tenantId: 'ledger-t', amountMicroUsd: 100, description: 'run', runId: `run-${i}` }));
    expect(first).toEqual(Array(30).fill(true));
    expect(again).toEqual(Array(30).fill(false));
    expect((await getWallet(database.db, 'ledger-t')).balanceMicroUSD).toBe(1_000_000 - 30 * 100);
  });
});
