import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';

/**
 * The README's quick start, run as a newcomer runs it: in a fresh clone of this repository (its committed files; the
 * installed node_modules are linked in, the same lockfile `npm ci` would install), `npm start`, then the blocks of
 * "Walk-through with curl" and "Use it" (the svc CLI from the clone, the official openai SDK) copied from the README
 * and run as they are written, and finally `kill <pid of npm start>`, after which the port is free.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);
const PORT = 8080; // the README's address: the blocks are run as written

/** The fenced code blocks (```lang) of the README section that starts with `heading`. */
function blocksOf(readme: string, heading: string, lang: string): string[] {
  const start = readme.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`README has no section "${heading}"`);
  const level = heading.split(' ')[0]!;
  const rest = readme.slice(start + heading.length + 2);
  const next = rest.search(new RegExp(`\\n#{2,${level.length}} `));
  const section = next < 0 ? rest : rest.slice(0, next);
  return [...section.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1]!);
}

const portAnswers = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
  });

describe('the README quick start from a fresh clone', () => {
  let dir: string;
  let clone: string;
  let server: ChildProcess | undefined;
  let output = '';
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const env = () => ({ PATH: process.env.PATH ?? '', HOME: dir, SVC_CONFIG_DIR: join(dir, 'config'), KEY: readFileSync(join(clone, '.svc/bootstrap-key'), 'utf8').trim() });

  beforeAll(async () => {
    expect(await portAnswers(PORT), `port ${PORT} is taken: the quick start needs it free`).toBe(false);
    dir = mkdtempSync(join(tmpdir(), 'svc-quickstart-'));
    chmodSync(dir, 0o711); // as root, the embedded PostgreSQL's OS user walks through it (the README says so)
    clone = join(dir, 'svc');
    await run('git', ['clone', '--quiet', ROOT, clone]);
    symlinkSync(join(ROOT, 'node_modules'), join(clone, 'node_modules'));
    // the quick start's first block: `npm ci && npm start`; the install is the linked node_modules
    expect(readme).toContain('npm ci && npm start');
    server = spawn('npm', ['start'], { cwd: clone, env: { PATH: process.env.PATH ?? '', HOME: dir }, stdio: ['ignore', 'pipe', 'pipe'] });
    server.stdout!.on('data', (d) => (output += d));
    server.stderr!.on('data', (d) => (output += d));
    await new Promise<void>((resolve, reject) => {
      const check = () => (/svc listening on/.test(output) && existsSync(join(clone, '.svc/bootstrap-key')) ? resolve() : undefined);
      server!.stdout!.on('data', check);
      server!.stderr!.on('data', check);
      server!.once('exit', (code) => reject(new Error(`npm start exited with ${code}:\n${output}`)));
    });
  }, 120_000);

  afterAll(async () => {
    if (server && server.exitCode === null) server.kill('SIGKILL');
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('runs the curl walk-through as written: an agent on the demo model, streamed to one result', async () => {
    onTestFailed(() => console.error(output));
    const [walk] = blocksOf(readme, '### Walk-through with curl', 'sh');
    const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', walk!], { cwd: clone, env: env() });
    expect(stdout).toMatch(/"type":"session_init"/);
    expect(stdout).toContain('"message":"demo reply: hello there"');
    expect(stdout.match(/"type":"(result|error)"/g)).toEqual(['"type":"result"']);
  });

  it('runs the CLI from the clone as written: login against the local URL, list profiles, run one', async () => {
    onTestFailed(() => console.error(output));
    const [cli] = blocksOf(readme, '## Use it', 'sh');
    const { stdout, stderr } = await run('bash', ['-euo', 'pipefail', '-c', cli!], { cwd: clone, env: env() });
    expect(stdout).toMatch(/^helper\b/m);
    expect(stdout).toContain('demo reply: hello from the CLI');
    expect(stderr).not.toMatch(/error/i);
  });

  it('runs the openai SDK snippet as written: an agent, a session, one streamed turn', async () => {
    onTestFailed(() => console.error(output));
    const [js] = blocksOf(readme, '## Use it', 'js');
    writeFileSync(join(clone, 'quickstart.mjs'), js!);
    const { stdout } = await run(join(clone, 'node_modules/.bin/node'), ['quickstart.mjs'], { cwd: clone, env: env() });
    const types = stdout.trim().split('\n');
    expect(types).toContain('agent.session.turn.completed');
    expect(types.at(-1)).toBe('agent.session.idle');
  });

  it('stops the server when the pid of `npm start` is killed: the port is free again', async () => {
    onTestFailed(() => console.error(output));
    const exited = new Promise((r) => server!.once('exit', r));
    server!.kill('SIGTERM');
    await exited;
    // npm passes the signal to svc, which stops gracefully and releases the port before it exits
    await new Promise<void>((resolve, reject) => {
      const deadline = Date.now() + 15_000;
      const poll = async () => ((await portAnswers(PORT)) ? (Date.now() > deadline ? reject(new Error(`port ${PORT} still answers`)) : setImmediate(poll)) : resolve());
      void poll();
    });
    expect(await portAnswers(PORT)).toBe(false);
  }, 30_000);
});
