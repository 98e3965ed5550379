import { createHash, randomBytes, randomInt } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../../../db/index.ts';
import { AppError, badRequest, notFound } from '../../../shared/errors.ts';
import { insertKey, type KeyDeps, type Principal } from '../identity/index.ts';
import { hasRole } from '../identity/index.ts';
import { claimApproved, decideCode, findCode, insertCode, setKeyId, sweepExpired, withDeviceScope, type DeviceRow } from './device.repo.ts';

/**
 * Device login (RFC 8628 in the shape the `svc` CLI reads): the CLI asks for a code, a signed-in dashboard user
 * approves its user code at `/device`, and the CLI's next poll mints a tenant key with the approver's role. No key
 * exists before that poll, so nothing secret is stored with the code.
 */
export interface DeviceDeps {
  db: Kysely<DB>;
  keyDeps: KeyDeps;
  ttlMs: number;
}

export const POLL_INTERVAL_S = 5;
// No vowels (no words), no look-alikes (0/O, 1/I).
const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';

const hashCode = (deviceCode: string) => createHash('sha256').update(deviceCode).digest('hex');

function drawUserCode(): string {
  let s = '';
  for (let i = 0; i < 8; i++) s += USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)];
  return `${s.slice(0, 4)}-${s.slice(4)}`;
}

/** Accepts what a person types (`bcdf ghjk`, `BCDFGHJK`) and returns the stored form, or undefined. */
export function normalizeUserCode(input: string): string | undefined {
  const s = input.toUpperCase().replace(/[^A-Z]/g, '');
  if (s.length !== 8 || [...s].some((ch) => !USER_CODE_ALPHABET.includes(ch))) return undefined;
  return `${s.slice(0, 4)}-${s.slice(4)}`;
}

export interface DeviceCodeGrant {
  deviceCode: string;
  userCode: string;
  verificationUri: string;
  verificationUriComplete: string;
  expiresIn: number;
  interval: number;
}

export async function createDeviceCode(deps: DeviceDeps, input: { label: string; origin: string }): Promise<DeviceCodeGrant> {
  await withDeviceScope(deps.db, { sweep: true }, (tx) => sweepExpired(tx));
  const deviceCode = randomBytes(32).toString('base64url');
  const codeHash = hashCode(deviceCode);
  const expiresAt = new Date(Date.now() + deps.ttlMs);
  for (let attempt = 0; attempt < 5; attempt++) {
    const userCode = drawUserCode();
    const ok = await withDeviceScope(deps.db, { userCode }, (tx) => insertCode(tx, { codeHash, userCode, label: input.label, expiresAt }));
    if (!ok) continue;
    const verificationUri = `${input.origin}/device`;
    return {
      deviceCode,
      userCode,
      verificationUri,
      verificationUriComplete: `${verificationUri}?code=${userCode}`,
      expiresIn: Math.ceil(deps.ttlMs / 1000),
      interval: POLL_INTERVAL_S,
    };
  }
  throw new AppError(503, 'could not allocate a device code; try again');
}

/** OAuth-style poll errors: 400 with `error` one of authorization_pending, access_denied, expired_token, invalid_grant. */
const oauthError = (error: string, description: string) => new AppError(400, error, { extra: { error_description: description } });

export async function pollDeviceToken(deps: DeviceDeps, deviceCode: string): Promise<{ apiKey: string; keyId: string; role: string; org: string }> {
  const codeHash = hashCode(deviceCode);
  const claimed = await withDeviceScope(deps.db, { codeHash }, async (tx) => {
    const row = await findCode(tx, { codeHash });
    if (!row) throw oauthError('invalid_grant', 'unknown device code');
    if (row.status === 'consumed') throw oauthError('invalid_grant', 'this device code was already used');
    if (row.status === 'denied') throw oauthError('access_denied', 'the login was denied in the dashboard');
    if (row.status === 'pending' && row.expiresAt.getTime() <= Date.now()) throw oauthError('expired_token', 'the device code expired; run the login again');
    if (row.status === 'pending') throw oauthError('authorization_pending', 'waiting for approval in the dashboard');
    return claimApproved(tx, codeHash);
  });
  if (!claimed) throw oauthError('invalid_grant', 'this device code was already used');
  const key = await insertKey(deps.keyDeps, claimed.tenantId!, { name: claimed.label, role: claimed.role!, createdBy: claimed.approvedBy, expiresAt: null });
  await withDeviceScope(deps.db, { codeHash }, (tx) => setKeyId(tx, codeHash, key.id));
  return { apiKey: key.token, keyId: key.id, role: key.role, org: key.tenantId };
}

/** What the approval page shows about a user code. */
export async function lookupUserCode(deps: DeviceDeps, userCode: string): Promise<DeviceRow | undefined> {
  return withDeviceScope(deps.db, { userCode }, (tx) => findCode(tx, { userCode }));
}

export async function decideUserCode(deps: DeviceDeps, userCode: string, principal: Principal, approve: boolean): Promise<DeviceRow> {
  if (approve && !hasRole(principal, 'member')) throw badRequest('a viewer may not approve a login');
  const row = await withDeviceScope(deps.db, { userCode }, (tx) =>
    decideCode(tx, userCode, { approve, tenantId: principal.tenantId, role: principal.role, approvedBy: principal.keyId ?? principal.subject }),
  );
  if (!row) throw notFound('no pending login with this code (it may have expired or been decided already)');
  return row;
}
