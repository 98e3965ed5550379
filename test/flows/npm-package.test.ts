import { execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { waitForOutput, type SvcProcess } from '../support/process.ts';
import { createTestDatabase } from '../support/pg.ts';

/**
 * svc as an npm package: `npm pack` compiles the sources to dist/ (Node does not strip types inside node_modules) and
 * packs bin, dist, sql, skills, README and LICENSE, no tests; the tarball installed into an empty folder runs
 * `npx svc --version`, `npx svc serve` up to /healthz, and `import { startSvc } from 'svc'` from a plain .mjs file.
 * The install leaves out optional packages (the runtime SDKs, optional peers; the embedded PostgreSQL binaries), so
 * the server runs on a database of the test PostgreSQL server, and a run on runtime_a or runtime_b says how to install
 * its SDK; npm reads the packages from its cache when it has them.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

describe('the npm package', () => {
  let dir: string;
  let app: string;
  let tarball: string;
  let files: string[];
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  /** Node >= 22.12 first on PATH (the project's own Node 24), as a user of the package has it. */
  let env: Record<string, string>;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-package-'));
    const nodeDir = join(dir, 'node-bin');
    mkdirSync(nodeDir);
    symlinkSync(join(ROOT, 'node_modules/.bin/node'), join(nodeDir, 'node'));
    env = { PATH: `${nodeDir}:${process.env.PATH ?? ''}`, HOME: dir, npm_config_cache: process.env.npm_config_cache ?? join(process.env.HOME ?? '/root', '.npm') };
    const packed = await run('npm', ['pack', '--json', '--pack-destination', dir], { cwd: ROOT, env: { ...process.env, ...env }, maxBuffer: 64 * 1024 * 1024 });
    const [info] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as Array<{ filename: string; files: Array<{ path: string }> }>;
    tarball = join(dir, info!.filename);
    files = info!.files.map((f) => f.path);
    app = join(dir, 'app');
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'uses-svc', private: true, type: 'module' }));
    await run('npm', ['install', tarball, '--omit=optional', '--no-audit', '--no-fund', '--prefer-offline'], { cwd: app, env: { ...process.env, ...env }, maxBuffer: 16 * 1024 * 1024 });
    db = await createTestDatabase();
  }, 240_000);

  afterAll(async () => {
    await db?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('holds the compiled library, the bin, the migrations and the license, and no tests or TypeScript sources', () => {
    expect(files).toEqual(expect.arrayContaining(['LICENSE', 'README.md', 'package.json', 'bin/svc.js', 'dist/index.js', 'dist/index.d.ts', 'dist/cli/main.js', 'sql/0001_identity.sql', 'dist/modules/conductor/dashboard/ui/main.js']));
    expect(files.filter((f) => /\.test\.|^test\/|^src\/|\.fixture\./.test(f))).toEqual([]);
    expect(readFileSync(join(ROOT, 'LICENSE'), 'utf8')).toMatch(/^Apache License\s+Version 2\.0/);
  });

  it('carries its patched postgres.js inside the package instead of the registry copy (patches/: connections that lose their backend)', () => {
    expect(files).toContain('node_modules/postgres/src/connection.js');
    const installed = readFileSync(join(app, 'node_modules/svc/node_modules/postgres/src/connection.js'), 'utf8');
    expect(installed).toContain('svc patch');
  });

  it('runs `npx svc --version` from node_modules', async () => {
    const { stdout } = await run('npx', ['svc', '--version'], { cwd: app, env });
    expect(stdout.trim()).toBe(VERSION);
  });

  it('serves with `npx svc serve` until /healthz answers, and stops on SIGTERM', async () => {
    // its own process group: npx runs the bin through a shell, and the stop below reaches every process of it
    const child = spawn('npx', ['svc', 'serve', '--port', '0'], { cwd: app, env: { ...env, DATABASE_URL: db.url, SVC_LOG_LEVEL: 'warn', SVC_DATA_DIR: join(dir, 'data') }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const proc = { output: () => out, child } as unknown as SvcProcess;
    const line = await waitForOutput(proc, /svc listening on (http:\/\/\S+)/, 60_000);
    const url = /svc listening on (http:\/\/\S+)/.exec(line)![1]!;
    const res = await fetch(`${url}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('ok');
    // the dashboard's pages and the vendor modules they import are served from the installed package
    for (const asset of ['main.js', 'app.css', 'preact.mjs', 'uplot.mjs']) expect((await fetch(`${url}/dashboard/assets/${asset}`)).status, asset).toBe(200);
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    process.kill(-child.pid!, 'SIGTERM');
    await exited;
    // the server finishes its graceful stop, then nothing answers on its port
    await vi.waitFor(() => expect(fetch(`${url}/healthz`)).rejects.toThrow(), { timeout: 15_000, interval: 50 });
  }, 90_000);

  it('is importable: `import { startSvc } from "svc"` in a plain .mjs file starts and stops an instance', async () => {
    writeFileSync(
      join(app, 'start.mjs'),
      `import { startSvc } from 'svc';\nconst svc = await startSvc({ env: { DATABASE_URL: process.env.DB_URL, SVC_DATA_DIR: process.env.DATA, SVC_BOOTSTRAP_TOKEN: process.env.TOKEN } });\nconst res = await fetch(svc.url + '/api/whoami', { headers: { authorization: 'Bearer ' + svc.key } });\nconsole.log(JSON.stringify(await res.json()));\nawait svc.stop();\n`,
    );
    const { stdout } = await run('node', ['start.mjs'], { cwd: app, env: { ...env, DB_URL: db.url, DATA: join(dir, 'lib-data'), TOKEN: 'ao_test_packagepackagepackagepack01' } });
    expect(JSON.parse(stdout.trim().split('\n').at(-1)!)).toMatchObject({ tenantId: 'default', role: 'owner' });
  }, 90_000);

  it('installed without the runtime SDKs, a run on runtime_a or runtime_b ends with one error saying how to install its SDK', async () => {
    const peers = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { peerDependencies: Record<string, string> }).peerDependencies;
    writeFileSync(
      join(app, 'runtimes.mjs'),
      `import { startSvc } from 'svc';
const svc = await startSvc({ env: { ...process.env, DATABASE_URL: process.env.DB_URL, SVC_DATA_DIR: process.env.DATA, SVC_BOOTSTRAP_TOKEN: process.env.TOKEN } });
const headers = { authorization: 'Bearer ' + svc.key, 'content-type': 'application/json' };
const errors = [];
for (const [name, runtime, model] of [['claude', 'runtime_a', 'claude-sonnet-4-5'], ['codex', 'runtime_b', 'gpt-5.5']]) {
  await fetch(svc.url + '/api/profiles', { method: 'POST', headers, body: JSON.stringify({ name, runtime, model }) });
  const run = await (await fetch(svc.url + '/api/runs', { method: 'POST', headers, body: JSON.stringify({ profile: name, prompt: 'hi' }) })).json();
  const events = (await (await fetch(svc.url + '/api/runs/' + run.runId + '/stream', { headers })).text()).split('\\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)));
  errors.push(events.map((e) => e.type + ': ' + (e.message ?? '')));
}
console.log(JSON.stringify(errors));
await svc.stop();
`,
    );
    const { stdout } = await run('node', ['runtimes.mjs'], {
      cwd: app,
      env: { ...env, DB_URL: db.url, DATA: join(dir, 'runtimes-data'), TOKEN: 'ao_test_packagepackagepackagepack02', ANTHROPIC_API_KEY: 'k', OPENAI_API_KEY: 'k', SVC_LOG_LEVEL: 'error' },
    });
    const hint = (runtime: string, pkg: string) =>
      `error: ${runtime} needs the optional package ${pkg}, which is not installed: run \`npm run install:runtimes\` in a clone of svc, or \`npm install ${pkg}@${peers[pkg]}\` beside an installed svc; or use another runtime`;
    expect(JSON.parse(stdout.trim().split('\n').at(-1)!)).toEqual([[hint('runtime_a', '@anthropic-ai/claude-agent-sdk')], [hint('runtime_b', '@openai/codex-sdk')]]);
  }, 90_000);
});
