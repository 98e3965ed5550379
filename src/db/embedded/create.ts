import { existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { open, readdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Logger } from '../../shared/log.ts';
import { handOver, runAs, type OsUser } from './os-user.ts';
import { ensureTemplate, type TemplateSchema } from './template.ts';

/**
 * The first boot of a data folder: the cluster is a copy of the template, made in a staging folder and renamed into
 * place, so a boot killed half-way leaves no half-made cluster. A later boot finds PG_VERSION and checks that the
 * cluster was made by the same major version of PostgreSQL as the one svc ships. `schema` (asked for only here, on a
 * first boot) names what to bake into the template, so the new cluster has it already.
 */
export async function createPersistentCluster(dir: string, user: OsUser, packageVersion: string, log: Logger, schema?: () => Promise<TemplateSchema>): Promise<void> {
  const major = packageVersion.split('.')[0];
  if (existsSync(join(dir, 'PG_VERSION'))) {
    const made = readFileSync(join(dir, 'PG_VERSION'), 'utf8').trim();
    if (made !== major) {
      throw new Error(`the embedded cluster in ${dir} was made by PostgreSQL ${made} and svc ships PostgreSQL ${major}: dump it with pg_dump (svc db url) and restore it into a new data folder`);
    }
    return;
  }
  if (existsSync(dir) && readdirSync(dir).length > 0) throw new Error(`${dir} is not empty and holds no PostgreSQL cluster; move it away`);
  for (const name of readdirSync(dirname(dir)).filter((n) => n.startsWith('.pg-new-'))) rmSync(join(dirname(dir), name), { recursive: true, force: true }); // a first boot killed half-way
  const template = await ensureTemplate(user, await schema?.());
  const staging = mkdtempSync(join(dirname(dir), '.pg-new-'));
  try {
    handOver(user, staging);
    await runAs(user, 'cp', ['-R', '-p', `${template}/.`, staging]);
    await syncTree(staging);
    rmSync(dir, { recursive: true, force: true }); // an empty folder made by hand
    renameSync(staging, dir);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  log.info('created the embedded PostgreSQL cluster', { dir });
}

/** The template is made without fsync (it is a cache); a cluster that keeps data is flushed to disk once. */
async function syncTree(dir: string): Promise<void> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  const paths = [dir, ...entries.map((e) => join(e.parentPath, e.name))];
  for (let i = 0; i < paths.length; i += 64) {
    await Promise.all(
      paths.slice(i, i + 64).map(async (p) => {
        const fh = await open(p, 'r');
        try {
          await fh.sync();
        } finally {
          await fh.close();
        }
      }),
    );
  }
}
