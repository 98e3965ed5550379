import type { Config, RoleName } from '../config/config.ts';
import { loadMigrations, migrate } from '../db/migrate.ts';
import { openDatabase, type Database, type DatabaseSchema } from '../db/database.ts';
import { BUILD_ORDER, ROLES, roleTraits } from './roles.ts';

/**
 * The process's database, for the roles that need one (else undefined): a PostgreSQL server, or the embedded cluster
 * svc starts. `svc serve` begins opening it before the server's modules load, so an embedded PostgreSQL boots while
 * they do (`onLaunch`: its postmaster is spawned); buildApp opens it otherwise.
 */
export function openDatabaseOf(config: Config, onLaunch?: () => void): Promise<Database> | undefined {
  if (!roleTraits(config.roles).needsDatabase) return undefined;
  return openDatabase({ url: config.databaseUrl, dataDir: config.dataDir, embedded: config.embeddedPostgres, schema: () => newDatabaseSchema(config.roles), onLaunch });
}

/**
 * What a new embedded cluster starts with: sql/ migrated and what the roles' modules install at start, named by that
 * SQL itself (a changed migration or job-queue version is another template; boot migrates as ever).
 */
async function newDatabaseSchema(roles: readonly RoleName[]): Promise<DatabaseSchema> {
  const migrations = loadMigrations();
  const extra: string[] = [];
  for (const name of BUILD_ORDER) if (roles.includes(name) && ROLES[name].schemaSql) extra.push(await ROLES[name].schemaSql!());
  return {
    key: [...migrations.flatMap((m) => [m.name, m.text]), ...extra].join('\0'),
    async install(database) {
      await migrate(database, migrations);
      for (const text of extra) await database.executeText(text);
    },
  };
}
