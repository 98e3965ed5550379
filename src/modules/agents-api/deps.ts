import type { Kysely } from 'kysely';
import type { DB } from '../../db/index.ts';
import type { SecretBox } from './secret-box.ts';
import type { GuardedFetch, PrivateAddresses } from '../../shared/egress/index.ts';

/**
 * What the resource services of the agents API (files, skills, vaults, environments) run on: the
 * database handle for the agents API's own tables, and the secret box keyed by SVC_SECRETS_KEY.
 */
export interface ResourceDeps {
  db: Kysely<DB>;
  box: SecretBox;
  /**
   * How the URLs tenants give are called (an MCP credential's OAuth token endpoint): the conductor's guarded fetcher,
   * under SVC_PRIVATE_ADDRESSES. Absent: the address policy's `deny`.
   */
  tenantFetch?: GuardedFetch;
  /** SVC_PRIVATE_ADDRESSES, for the URLs judged as written when saved (a token endpoint); absent: allow. */
  privateAddresses?: PrivateAddresses;
}

/** Unix seconds of a database timestamp (every /v1 timestamp is integer seconds). */
export function seconds(d: Date | string): number {
  return Math.floor(new Date(d).getTime() / 1000);
}
