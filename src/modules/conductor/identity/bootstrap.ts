import { writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Kysely } from 'kysely';
import type { DB } from '../../../db/index.ts';
import { withOperator, withKeyLookup } from '../../../db/index.ts';
import type { Logger } from '../../../shared/log.ts';
import { hashKey } from './keys.ts';
import { insertKey, type KeyDeps } from './keys.service.ts';
import { insertDefaultTenant, keyHashExists } from './keys.repo.ts';

/**
 * First boot: tenant `default` exists, and there is an owner key. `SVC_BOOTSTRAP_TOKEN` makes the given token an owner
 * key (idempotent); without it, the boot that creates tenant `default` mints one owner key, prints it once and writes
 * it to `<dataDir>/bootstrap-key` (0600). Concurrent boots race on the tenant insert, so exactly one mints.
 */
export async function bootstrapIdentity(
  deps: KeyDeps & { log: Logger },
  opts: { bootstrapToken: string | undefined; dataDir: string; writeKeyFile: boolean },
): Promise<{ token: string | undefined; created: boolean }> {
  const created = await withOperator(deps.db, (tx) => insertDefaultTenant(tx));
  if (opts.bootstrapToken) {
    const hash = hashKey(deps.pepper, opts.bootstrapToken);
    if (!(await keyExists(deps.db, hash))) {
      try {
        await insertKey(deps, 'default', { name: 'bootstrap', role: 'owner', createdBy: null, expiresAt: null, token: opts.bootstrapToken });
      } catch (err) {
        // Replicas boot together with the same token: the one that lost the race finds the key in place, which is fine.
        if (!(await keyExists(deps.db, hash))) throw err;
      }
    }
    return { token: opts.bootstrapToken, created };
  }
  if (!created) return { token: undefined, created };
  const key = await insertKey(deps, 'default', { name: 'bootstrap', role: 'owner', createdBy: null, expiresAt: null });
  if (opts.writeKeyFile) {
    mkdirSync(opts.dataDir, { recursive: true, mode: 0o700 });
    const path = join(opts.dataDir, 'bootstrap-key');
    writeFileSync(path, key.token + '\n', { mode: 0o600 });
    deps.log.info('first boot: owner key of tenant default written once', { path });
  }
  process.stderr.write(`\nsvc: first boot. Owner key of tenant "default" (shown once): ${key.token}\n\n`);
  return { token: key.token, created };
}

async function keyExists(db: Kysely<DB>, hash: string): Promise<boolean> {
  return withKeyLookup(db, hash, (tx) => keyHashExists(tx, hash));
}
