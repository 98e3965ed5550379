import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Where svc's own files are, wherever its code runs from: the TypeScript sources of a clone (`src/`), the compiled
 * npm package (`dist/`), or the boot bundle of a clone (`.svc-bundle/b-<time>/`, see bin/bundle.js). Each
 * is a different depth below the package root, so no path is computed relative to a module's own URL: the root is the
 * nearest folder above this module whose package.json names `bin/svc.js` as its `svc` command, and every asset folder
 * (migrations, platform skills, the dashboard's UI files) is found from there.
 */
function findRoot(from: string): { root: string; version: string } {
  for (let dir = from; ; dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { version?: string; bin?: Record<string, string> };
      if (pkg.bin?.svc === 'bin/svc.js') return { root: dir, version: pkg.version ?? '0.0.0' };
    }
    if (dirname(dir) === dir) throw new Error(`svc: no package.json of svc above ${from}`);
  }
}

const here = fileURLToPath(import.meta.url);
const found = findRoot(dirname(here));

/** The package root: the clone, or `node_modules/svc` when svc is installed as a dependency. */
export const PACKAGE_ROOT = found.root;
/** The package version, from its package.json. */
export const PACKAGE_VERSION = found.version;
/** The code this process runs: `src` (TypeScript sources), `dist` (the compiled npm package) or `bundle` (a clone's boot bundle). */
export const RUNNING_FROM: 'src' | 'dist' | 'bundle' = here.startsWith(join(PACKAGE_ROOT, 'dist') + sep) ? 'dist' : here.startsWith(join(PACKAGE_ROOT, 'src') + sep) ? 'src' : 'bundle';
/** The source tree whose non-code files (the dashboard's UI) are served: `dist/` in the npm package, else `src/`. */
const CODE_DIR = join(PACKAGE_ROOT, RUNNING_FROM === 'dist' ? 'dist' : 'src');

/** Forward-only SQL migrations (`sql/NNNN_name.sql`). */
export const SQL_DIR = join(PACKAGE_ROOT, 'sql');
/** Platform skills, one folder each. */
export const PLATFORM_SKILLS_DIR = join(PACKAGE_ROOT, 'skills');
/** The dashboard's Preact + htm modules and CSS, served as they are. */
export const DASHBOARD_UI_DIR = join(CODE_DIR, 'modules', 'conductor', 'dashboard', 'ui');

/** `require` resolving from the package root: svc's own dependencies, whichever of the three layouts runs. */
export const packageRequire = createRequire(join(PACKAGE_ROOT, 'package.json'));
