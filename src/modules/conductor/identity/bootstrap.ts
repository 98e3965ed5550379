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
  opts: { bootstrapToken: string | undefined; dataDir: string; writeKeyFile: boolean; adminTenant?: string | undefined },
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
  let path: string | undefined;
  if (opts.writeKeyFile) {
    mkdirSync(opts.dataDir, { recursive: true, mode: 0o700 });
    path = join(opts.dataDir, 'bootstrap-key');
    writeFileSync(path, key.token + '\n', { mode: 0o600 });
    deps.log.info('first boot: owner key of tenant default written once', { path });
  }
  process.stderr.write(firstBootMessage(key.token, path, opts.adminTenant));
  return { token: key.token, created };
}

/**
 * What the first boot tells its operator: the key, where it was written, and how a key comes to manage tenants
 * (`/api/tenants` answers only keys of the operator tenant, AGENT_ORC_ADMIN_TENANT).
 */
export function firstBootMessage(token: string, path: string | undefined, adminTenant: string | undefined): string {
  const lines = [`svc: first boot. Owner key of tenant "default" (shown once): ${token}`];
  if (path) lines.push(`     Written to ${path} (mode 0600).`);
  if (adminTenant === 'default') lines.push('     Tenant "default" is the operator tenant (AGENT_ORC_ADMIN_TENANT): this key can create tenants and their keys (/api/tenants).');
  else {
    lines.push('     To create tenants and their keys with it (/api/tenants, the operator\'s routes), restart svc with');
    lines.push('     AGENT_ORC_ADMIN_TENANT=default: the keys of that tenant, owners and admins, then manage tenants.');
  }
  return `\n${lines.join('\n')}\n\n`;
}

async function keyExists(db: Kysely<DB>, hash: string): Promise<boolean> {
  return withKeyLookup(db, hash, (tx) => keyHashExists(tx, hash));
}
