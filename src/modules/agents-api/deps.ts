import type { Kysely } from 'kysely';
import type { DB } from '../../db/index.ts';
import type { SecretBox } from './secret-box.ts';

/**
 * What the resource services of the agents API (files, skills, vaults, environments) run on: the
 * database handle for the agents API's own tables, and the secret box keyed by SVC_SECRETS_KEY.
 */
export interface ResourceDeps {
  db: Kysely<DB>;
  box: SecretBox;
}

/** Unix seconds of a database timestamp (every /v1 timestamp is integer seconds). */
export function seconds(d: Date | string): number {
  return Math.floor(new Date(d).getTime() / 1000);
}
