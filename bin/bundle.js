// The boot bundle of a clone: `src/cli/main.ts` and what it imports, svc's dependencies included, bundled by rolldown
// (rolldown.config.js) into .svc-bundle/ (git-ignored; not in node_modules, which clones may share through a link).
// bin/svc.js runs it instead of the sources when it was built from the sources as they are now; SVC_NO_BUNDLE=1 runs
// the sources anyway. The npm package has no bundle (it runs dist/).
//
//   node bin/bundle.js               build it (`npm run bundle`)
//   node bin/bundle.js --if-stale    build it unless it is fresh (`npm start`, `prepare` after npm ci / npm install)
//
// A build goes to a folder of its own (b-<time>), and stamp.json names the current one, written last: a process that
// started from the previous build still finds the chunks it imports lazily. The two builds before the current one are
// kept, older ones removed.
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url)).replace(/\/+$/, '');
export const CACHE_DIR = join(ROOT, '.svc-bundle');
const STAMP = join(CACHE_DIR, 'stamp.json');
/** Besides src/: what changes the bundle's content (dependency versions and patches, the bundler's settings). */
const OTHER_INPUTS = ['package.json', 'package-lock.json', 'rolldown.config.js', 'bin/bundle.js'];
/** patch-package's patches of dependencies (npm install applies them to node_modules; the bundle holds the result). */
const PATCHES = 'patches';
const KEEP_PREVIOUS = 2;

/**
 * The bundle's inputs: every file and folder under src/ but the tests, which it never holds (a folder's time changes
 * when an entry is added, removed or renamed in it), and OTHER_INPUTS; paths relative to the root. Listing them reads
 * every folder, so the build does it once and the stamp keeps the list: the check only stats what it names.
 */
function listInputs() {
  const out = [];
  const walk = (rel) => {
    out.push(rel);
    for (const e of readdirSync(join(ROOT, rel), { withFileTypes: true })) {
      const path = `${rel}/${e.name}`;
      if (e.isDirectory()) walk(path);
      else if (!e.name.endsWith('.test.ts')) out.push(path);
    }
  };
  walk('src');
  for (const f of OTHER_INPUTS) if (existsSync(join(ROOT, f))) out.push(f);
  if (existsSync(join(ROOT, PATCHES))) for (const f of readdirSync(join(ROOT, PATCHES))) out.push(`${PATCHES}/${f}`);
  return out;
}

/** The inputs' modification times, summed (any change to any of them changes it) and the newest; undefined when one
 * of them is gone. */
function timesOf(paths) {
  let sum = 0;
  let newest = 0;
  const noThrow = { throwIfNoEntry: false };
  for (const rel of paths) {
    const st = statSync(`${ROOT}/${rel}`, noThrow); // not path.join: this loop is most of svc's start-up check
    if (!st) return undefined;
    sum += st.mtimeMs;
    if (st.mtimeMs > newest) newest = st.mtimeMs;
  }
  return { sum, newest };
}

function readStamp() {
  try {
    return JSON.parse(readFileSync(STAMP, 'utf8'));
  } catch {
    return undefined;
  }
}

/** The bundle's entry file when one was built from the inputs as they are now, else undefined. */
export function freshBundle() {
  const stamp = readStamp();
  if (!stamp?.dir || !Array.isArray(stamp.inputs?.paths)) return undefined;
  const entry = join(CACHE_DIR, stamp.dir, 'main.mjs');
  if (!existsSync(entry)) return undefined;
  const now = timesOf(stamp.inputs.paths);
  return now && now.sum === stamp.inputs.sum && now.newest === stamp.inputs.newest ? entry : undefined;
}

export async function build() {
  const t0 = performance.now();
  // Read before the build reads the sources: a file saved during the build makes this build stale.
  const paths = listInputs();
  const inputs = { ...timesOf(paths), paths };
  const { build: rolldown, VERSION } = await import('rolldown');
  const config = (await import('../rolldown.config.js')).default;
  mkdirSync(CACHE_DIR, { recursive: true });
  const dir = `b-${Date.now()}-${process.pid}`;
  const tmp = join(CACHE_DIR, `${dir}.tmp`);
  try {
    await rolldown({ ...config, cwd: ROOT, logLevel: 'warn', output: { ...config.output, dir: tmp } });
    renameSync(tmp, join(CACHE_DIR, dir));
  } catch (err) {
    rmSync(tmp, { recursive: true, force: true });
    throw err;
  }
  let git;
  try {
    const { execFileSync } = await import('node:child_process');
    const run = (...args) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    git = { head: run('rev-parse', 'HEAD'), dirty: run('status', '--porcelain', '--', 'src', 'package.json', 'package-lock.json') !== '' };
  } catch {
    git = undefined; // not a git checkout, or no git
  }
  const stamp = { dir, builtAt: new Date().toISOString(), node: process.version, rolldown: VERSION, root: ROOT, ...(git ? { git } : {}), inputs };
  writeFileSync(`${STAMP}.tmp`, JSON.stringify(stamp, null, 2) + '\n');
  renameSync(`${STAMP}.tmp`, STAMP);
  const builds = readdirSync(CACHE_DIR)
    .filter((n) => /^b-\d+-\d+$/.test(n) && n !== dir)
    .sort((a, b) => Number(b.split('-')[1]) - Number(a.split('-')[1]));
  for (const old of builds.slice(KEEP_PREVIOUS)) rmSync(join(CACHE_DIR, old), { recursive: true, force: true });
  return { dir: join(CACHE_DIR, dir), ms: performance.now() - t0 };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const ifStale = process.argv.includes('--if-stale');
  // Nothing to bundle in the npm package, nor in a Docker stage before the sources are copied; `npm pack` and
  // `npm publish` run `prepare` too, and the package has no use for a bundle.
  const skip = !existsSync(join(ROOT, 'src')) ? 'no src/ here' : ['pack', 'publish'].includes(process.env.npm_command ?? '') ? `npm ${process.env.npm_command}` : undefined;
  if (skip) {
    if (!ifStale) console.error(`svc bundle: nothing to bundle (${skip})`);
    process.exit(ifStale ? 0 : 1);
  }
  if (ifStale && freshBundle()) process.exit(0);
  try {
    const { dir, ms } = await build();
    console.error(`svc bundle: built ${dir} in ${(ms / 1000).toFixed(1)} s`);
  } catch (err) {
    // With --if-stale (npm ci, npm start) a failed build is not fatal: svc runs from the sources, as with SVC_NO_BUNDLE.
    // Without rolldown (`npm ci --omit=dev`, the Docker image) there is no bundle either.
    const why = err?.code === 'ERR_MODULE_NOT_FOUND' && /'rolldown'/.test(err.message) ? 'rolldown (a devDependency) is not installed' : (err?.stack ?? String(err));
    console.error(`svc bundle: not built: ${why}${ifStale ? '; svc runs from the sources' : ''}`);
    process.exit(ifStale ? 0 : 1);
  }
}
