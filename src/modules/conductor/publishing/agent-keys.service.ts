import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../../../db/index.ts';
import { withKeyLookup, withTenant } from '../../../db/index.ts';
import { notFound, unauthorized } from '../../../shared/errors.ts';
import { prefixedId } from '../../../shared/ids.ts';
import { futureExpiry, hashKey } from '../identity/index.ts';
import { activeOf } from './published.service.ts';
import { insertAgentKey, revokeAgentKey, selectAgentKeyByHash, selectAgentKeys } from './publishing.repo.ts';

/**
 * Agent keys (`pk_<random>`): they open one published agent's chat gateway and nothing else. Stored as HMAC-SHA256
 * under the tenant keys' pepper; the plaintext is returned once, at issue. `/api` and `/v1` never accept them: their
 * authentication takes only `ao_` keys and JWTs.
 */
export const AGENT_KEY_PATTERN = /^pk_[A-Za-z0-9]{32,128}$/;
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export interface AgentKeyView {
  id: string;
  publishedId: string;
  label: string;
  prefix: string;
  createdAt: string;
  expiresAt: string | null;
  revokedAt: string | null;
  status: 'active' | 'revoked' | 'expired';
}

export interface AgentKeyDeps {
  db: Kysely<DB>;
  pepper: string;
}

function mintToken(): string {
  let random = '';
  for (const b of randomBytes(40)) random += ALPHABET[b % ALPHABET.length];
  return `pk_${random}`;
}

type KeyRow = { id: string; published_id: string; label: string; key_prefix: string; created_at: Date; expires_at: Date | null; revoked_at: Date | null };

function toView(r: KeyRow): AgentKeyView {
  const expired = r.expires_at !== null && new Date(r.expires_at).getTime() <= Date.now();
  return {
    id: r.id,
    publishedId: r.published_id,
    label: r.label,
    prefix: r.key_prefix,
    createdAt: new Date(r.created_at).toISOString(),
    expiresAt: r.expires_at ? new Date(r.expires_at).toISOString() : null,
    revokedAt: r.revoked_at ? new Date(r.revoked_at).toISOString() : null,
    status: r.revoked_at ? 'revoked' : expired ? 'expired' : 'active',
  };
}

export async function issueAgentKey(
  deps: AgentKeyDeps,
  tenantId: string,
  profile: string,
  input: { label: string; expiresAt?: string | null; createdBy: string | null },
): Promise<AgentKeyView & { token: string }> {
  const expiresAt = futureExpiry(input.expiresAt);
  const token = mintToken();
  const row = await withTenant(deps.db, tenantId, async (tx) => {
    const published = await activeOf(tx, profile);
    return insertAgentKey(tx, {
      id: prefixedId('akey'),
      tenant_id: tenantId,
      published_id: published.id,
      label: input.label,
      key_hash: hashKey(deps.pepper, token),
      key_prefix: token.slice(0, 7),
      created_by: input.createdBy,
      expires_at: expiresAt,
    });
  });
  return { ...toView(row), token };
}

export async function listAgentKeys(deps: AgentKeyDeps, tenantId: string, profile: string): Promise<AgentKeyView[]> {
  return withTenant(deps.db, tenantId, async (tx) => (await selectAgentKeys(tx, (await activeOf(tx, profile)).id)).map(toView));
}

export async function revokeKeyOf(deps: AgentKeyDeps, tenantId: string, profile: string, keyId: string): Promise<void> {
  await withTenant(deps.db, tenantId, async (tx) => {
    if (!(await revokeAgentKey(tx, (await activeOf(tx, profile)).id, keyId))) throw notFound(`unknown agent key: ${keyId}`);
  });
}

/** The agent key behind a gateway bearer: 401 when it is not one, unknown, revoked or expired. */
export async function verifyAgentKey(deps: AgentKeyDeps, token: string): Promise<{ keyId: string; tenantId: string; publishedId: string }> {
  if (!AGENT_KEY_PATTERN.test(token)) throw unauthorized(token.startsWith('ao_') ? 'tenant API keys do not open the chat gateway; use an agent key (pk_…)' : 'invalid agent key');
  const hash = hashKey(deps.pepper, token);
  const key = await withKeyLookup(deps.db, hash, (tx) => selectAgentKeyByHash(tx, hash));
  if (!key) throw unauthorized('invalid agent key');
  if (key.revoked_at) throw unauthorized('agent key revoked');
  if (key.expires_at && new Date(key.expires_at).getTime() <= Date.now()) throw unauthorized('agent key expired');
  return { keyId: key.id, tenantId: key.tenant_id, publishedId: key.published_id };
}

/** The caller of a gateway request from its `Authorization` header: for now always an agent key of the agent. */
export async function callerOf(deps: AgentKeyDeps, header: string | undefined): Promise<{ tenantId: string; publishedId: string; owner: string }> {
  const m = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  if (!m) throw unauthorized('missing bearer credential: an agent key (pk_…) of this published agent');
  const key = await verifyAgentKey(deps, m[1]);
  return { tenantId: key.tenantId, publishedId: key.publishedId, owner: key.keyId };
}
