export { openDatabase, APP_ROLE, type Database, type DatabaseSchema } from './database.ts';
export { migrate, loadMigrations } from './migrate.ts';
export { withTenant, withTenantStatement, commitWithNext, sendWithNext, readWithNext, withOperator, withKeyLookup, withSystem, assertUnprivilegedRole, PrivilegedRoleError, type Tx } from './tenant.ts';
export type { DB } from './types.ts';
export { jsonb } from './json.ts';
export { pingDatabase } from './ping.ts';
export { storableJson, encodeValue, decodeValue, isUnstorable } from './storable.ts';
