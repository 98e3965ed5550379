import { sql, type Kysely } from 'kysely';
import type { DB, Tx } from '../../../db/index.ts';
import type { Role } from '../identity/index.ts';

/**
 * SQL for device-login codes. A code row is visible only inside a transaction that names it (see sql/0006_cli.sql):
 * by its device-code hash (the polling CLI) or its user code (the approving dashboard).
 */
export interface DeviceRow {
  codeHash: string;
  userCode: string;
  label: string;
  status: 'pending' | 'approved' | 'denied' | 'consumed';
  tenantId: string | null;
  role: Role | null;
  approvedBy: string | null;
  expiresAt: Date;
}

type Scope = { codeHash: string } | { userCode: string } | { sweep: true };

export async function withDeviceScope<T>(db: Kysely<DB>, scope: Scope, fn: (tx: Tx) => Promise<T>): Promise<T> {
  return db.transaction().execute(async (tx) => {
    if ('codeHash' in scope) await sql`select set_config('app.device_code', ${scope.codeHash}, true)`.execute(tx);
    else if ('userCode' in scope) await sql`select set_config('app.user_code', ${scope.userCode}, true)`.execute(tx);
    else await sql`select set_config('app.device_sweep', 'on', true)`.execute(tx);
    return fn(tx);
  });
}

const COLUMNS = ['code_hash', 'user_code', 'label', 'status', 'tenant_id', 'role', 'approved_by', 'expires_at'] as const;
type Raw = { code_hash: string; user_code: string; label: string; status: DeviceRow['status']; tenant_id: string | null; role: Role | null; approved_by: string | null; expires_at: Date };
const toRow = (r: Raw): DeviceRow => ({
  codeHash: r.code_hash,
  userCode: r.user_code,
  label: r.label,
  status: r.status,
  tenantId: r.tenant_id,
  role: r.role,
  approvedBy: r.approved_by,
  expiresAt: new Date(r.expires_at),
});

/** Inserts a code; false when the user code is taken (the caller draws another). */
export async function insertCode(tx: Tx, c: { codeHash: string; userCode: string; label: string; expiresAt: Date }): Promise<boolean> {
  const row = await tx
    .insertInto('device_codes')
    .values({ code_hash: c.codeHash, user_code: c.userCode, label: c.label, expires_at: c.expiresAt })
    .onConflict((oc) => oc.doNothing())
    .returning('code_hash')
    .executeTakeFirst();
  return row !== undefined;
}

export async function findCode(tx: Tx, by: { codeHash: string } | { userCode: string }): Promise<DeviceRow | undefined> {
  let q = tx.selectFrom('device_codes').select(COLUMNS);
  q = 'codeHash' in by ? q.where('code_hash', '=', by.codeHash) : q.where('user_code', '=', by.userCode);
  const row = await q.executeTakeFirst();
  return row ? toRow(row as Raw) : undefined;
}

/** Records the dashboard's decision on a pending, unexpired code; undefined when there is none. */
export async function decideCode(
  tx: Tx,
  userCode: string,
  d: { approve: boolean; tenantId: string; role: Role; approvedBy: string | null },
): Promise<DeviceRow | undefined> {
  const row = await tx
    .updateTable('device_codes')
    .set({ status: d.approve ? 'approved' : 'denied', tenant_id: d.tenantId, role: d.role, approved_by: d.approvedBy, decided_at: new Date() })
    .where('user_code', '=', userCode)
    .where('status', '=', 'pending')
    .where('expires_at', '>', new Date())
    .returning(COLUMNS)
    .executeTakeFirst();
  return row ? toRow(row as Raw) : undefined;
}

/** Claims an approved code exactly once (concurrent polls: one wins). */
export async function claimApproved(tx: Tx, codeHash: string): Promise<DeviceRow | undefined> {
  const row = await tx
    .updateTable('device_codes')
    .set({ status: 'consumed' })
    .where('code_hash', '=', codeHash)
    .where('status', '=', 'approved')
    .returning(COLUMNS)
    .executeTakeFirst();
  return row ? toRow(row as Raw) : undefined;
}

export async function setKeyId(tx: Tx, codeHash: string, keyId: string): Promise<void> {
  await tx.updateTable('device_codes').set({ key_id: keyId }).where('code_hash', '=', codeHash).execute();
}

/** Deletes codes that expired over an hour ago (polls just after expiry still learn `expired_token`). */
export async function sweepExpired(tx: Tx): Promise<void> {
  await tx.deleteFrom('device_codes').where('expires_at', '<', new Date(Date.now() - 3_600_000)).execute();
}
