import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { connect } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { freePort } from '../support/listen.ts';

/**
 * The README, run as a newcomer runs it: in a fresh clone of this repository (its committed files; the installed
 * node_modules are linked in, the same lockfile `npm ci` would install), the quick start's `npm start`, then the
 * blocks of "A first agent in five minutes" copied from the README and run as they are written: the curl
 * walk-through, the svc CLI, the dashboard's address, and the official `openai` SDK (openai@7.15.0 installed from the
 * npm registry into a folder of its own, the snippet run with the clone's own Node). Then the tenant lines, on the
 * server restarted as the README says (`AGENT_ORC_ADMIN_TENANT=default npm start`), and finally `kill <pid of npm
 * start>`, after which the port is free.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);
/** The README's port. The test serves on a free port instead, so a quick-start server of the person running the
 * tests may hold 8080; the README's lines are run as written with only that port number changed. */
const README_PORT = 8080;
let PORT: number;
const atPort = (text: string) => text.replaceAll(`127.0.0.1:${README_PORT}`, `127.0.0.1:${PORT}`).replaceAll(`localhost:${README_PORT}`, `localhost:${PORT}`);

/** The fenced code blocks (```lang) of the README section that starts with `heading`, up to the next heading of its level or above. */
function blocksOf(readme: string, heading: string, lang: string): string[] {
  const start = readme.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`README has no section "${heading}"`);
  const level = heading.split(' ')[0]!;
  const rest = readme.slice(start + heading.length + 2);
  const next = rest.search(new RegExp(`\\n#{2,${level.length}} `));
  const section = next < 0 ? rest : rest.slice(0, next);
  return [...section.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map((m) => atPort(m[1]!));
}

const portAnswers = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
  });

describe('the README from a fresh clone', () => {
  let dir: string;
  let clone: string;
  let server: ChildProcess | undefined;
  let output = '';
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  // the terminal the README's lines are typed into: KEY is exported by the walk-through's first line
  const env = () => ({ PATH: process.env.PATH ?? '', HOME: dir, SVC_CONFIG_DIR: join(dir, 'config'), KEY: readFileSync(join(clone, '.svc/bootstrap-key'), 'utf8').trim() });
  // npm reaches the registry as this machine's user does: its npm configuration (a CA file, a proxy) and its cache
  const npmEnv = () => {
    const passed = Object.fromEntries(
      ['NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE', 'SSL_CERT_DIR', 'HTTPS_PROXY', 'HTTP_PROXY', 'NO_PROXY', 'https_proxy', 'http_proxy', 'no_proxy'].flatMap((k) => (process.env[k] ? [[k, process.env[k]!]] : [])),
    );
    const userconfig = join(homedir(), '.npmrc');
    return { ...passed, ...(existsSync(userconfig) ? { npm_config_userconfig: userconfig } : {}), npm_config_cache: join(homedir(), '.npm') };
  };

  /** `npm start` in the clone, as the README writes it (with `extra` in its environment); resolves once it serves. */
  async function npmStart(extra: Record<string, string> = {}) {
    output = '';
    server = spawn('npm', ['start'], { cwd: clone, env: { PATH: process.env.PATH ?? '', HOME: dir, PORT: String(PORT), ...extra }, stdio: ['ignore', 'pipe', 'pipe'] });
    server.stdout!.on('data', (d) => (output += d));
    server.stderr!.on('data', (d) => (output += d));
    await new Promise<void>((resolve, reject) => {
      const check = () => (/svc listening on/.test(output) && existsSync(join(clone, '.svc/bootstrap-key')) ? resolve() : undefined);
      server!.stdout!.on('data', check);
      server!.stderr!.on('data', check);
      server!.once('exit', (code) => reject(new Error(`npm start exited with ${code}:\n${output}`)));
    });
  }

  /** `kill <pid of npm start>`: npm passes the signal to svc, which stops gracefully and releases the port before it exits. */
  async function stop() {
    const exited = new Promise((r) => server!.once('exit', r));
    server!.kill('SIGTERM');
    await exited;
    await new Promise<void>((resolve, reject) => {
      const deadline = Date.now() + 15_000;
      const poll = async () => ((await portAnswers(PORT)) ? (Date.now() > deadline ? reject(new Error(`port ${PORT} still answers`)) : setImmediate(poll)) : resolve());
      void poll();
    });
  }

  beforeAll(async () => {
    PORT = await freePort();
    dir = mkdtempSync(join(tmpdir(), 'svc-quickstart-'));
    chmodSync(dir, 0o711); // as root, the embedded PostgreSQL's OS user walks through it (the README says so)
    clone = join(dir, 'svc');
    await run('git', ['clone', '--quiet', ROOT, clone]);
    symlinkSync(join(ROOT, 'node_modules'), join(clone, 'node_modules'));
    // the quick start's two commands, exactly as CI runs the second; the install is the linked node_modules
    const [quick] = blocksOf(readme, '## Quick start', 'sh');
    expect(quick).toMatch(/^npm ci && npm start /m);
    expect(quick).toMatch(/^npm ci && npm run install:runtimes && npm test /m);
    await npmStart();
  }, 120_000);

  it('says at start where to go: the dashboard, the owner key, and how a key comes to manage tenants', () => {
    onTestFailed(() => console.error(output));
    expect(output).toContain(`svc listening on http://127.0.0.1:${PORT} `);
    expect(output).toContain(`dashboard:     http://127.0.0.1:${PORT}/dashboard`);
    expect(output).toContain(`API reference: http://127.0.0.1:${PORT}/docs`);
    expect(output).toMatch(/owner key: +\.svc\/bootstrap-key\n/);
    expect(output).toMatch(/Owner key of tenant "default" \(shown once\): ao_test_\w+/);
    expect(output).toContain('AGENT_ORC_ADMIN_TENANT=default');
  });

  afterAll(async () => {
    if (server && server.exitCode === null) server.kill('SIGKILL');
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('runs the curl walk-through as written: a profile on the demo model, a run streamed to one result', async () => {
    onTestFailed(() => console.error(output));
    const [walk] = blocksOf(readme, '### Walk-through with curl', 'sh');
    const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', walk!], { cwd: clone, env: env() });
    expect(stdout).toContain('"systemPrompt":"Be brief."');
    expect(stdout).toMatch(/"type":"session_init"/);
    expect(stdout).toContain('"message":"demo reply: hello there"');
    expect(stdout.match(/"type":"(result|error)"/g)).toEqual(['"type":"result"']);
  });

  it('runs the CLI from the clone as written: login against the local URL, list profiles, run one', async () => {
    onTestFailed(() => console.error(output));
    const [cli] = blocksOf(readme, '### The `svc` CLI', 'sh');
    const { stdout, stderr } = await run('bash', ['-euo', 'pipefail', '-c', cli!], { cwd: clone, env: env() });
    expect(stdout).toMatch(/^helper\b/m);
    expect(stdout).toContain('demo reply: hello from the CLI');
    expect(stderr).not.toMatch(/error/i);
  });

  it("opens the dashboard at the README's address and signs in with the owner key", async () => {
    onTestFailed(() => console.error(output));
    const section = readme.slice(readme.indexOf('### The dashboard'));
    const url = /<(http:\/\/127\.0\.0\.1:8080\/dashboard)>/.exec(section)?.[1]?.replace(':8080', `:${PORT}`);
    expect(url).toBeDefined();
    const page = await fetch(url!);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('Sign in with a tenant API key');
    const signIn = await fetch(`${url}/sign-in`, { method: 'POST', body: new URLSearchParams({ key: env().KEY }), redirect: 'manual' });
    expect(signIn.status).toBe(303);
    expect(signIn.headers.get('set-cookie')).toBeTruthy();
  });

  it('runs the openai SDK lines as written: openai@7.15.0 from the registry, the snippet on the clone’s Node', async () => {
    onTestFailed(() => console.error(output));
    const section = '### The official `openai` SDK';
    const [install, start] = blocksOf(readme, section, 'sh');
    const [js] = blocksOf(readme, section, 'js');
    expect(readme).toContain('Save this as `~/svc-openai/agent.mjs`');
    // one terminal: the install lines, the file saved where the README says, the run line
    const script = `${install}cat > ~/svc-openai/agent.mjs <<'SNIPPET'\n${js}SNIPPET\n${start}`;
    const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', script], { cwd: clone, env: { ...env(), ...npmEnv() }, maxBuffer: 16 * 1024 * 1024 });
    const installed = JSON.parse(readFileSync(join(dir, 'svc-openai/node_modules/openai/package.json'), 'utf8')) as { version: string };
    expect(installed.version).toBe('7.15.0');
    const types = stdout.trim().split('\n').filter((l) => l.startsWith('agent.'));
    expect(types).toContain('agent.session.turn.completed');
    expect(types.at(-1)).toBe('agent.session.idle');
    // the clone is untouched: npm did not add the package to svc's own package.json
    expect((await run('git', ['status', '--porcelain', 'package.json', 'package-lock.json'], { cwd: clone })).stdout).toBe('');
  }, 120_000);

  it('runs the tenant lines on the server restarted with AGENT_ORC_ADMIN_TENANT=default, as the README says', async () => {
    onTestFailed(() => console.error(output));
    const section = '## Keys, tenants and roles';
    const text = readme.slice(readme.indexOf(section));
    const restart = /`(AGENT_ORC_ADMIN_TENANT=default) npm start`/.exec(text);
    expect(restart).not.toBeNull();
    await stop();
    const [name, value] = restart![1]!.split('=') as [string, string];
    await npmStart({ [name]: value });
    const [tenants] = blocksOf(readme, section, 'sh');
    const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', tenants!], { cwd: clone, env: env() });
    expect(stdout).toContain('"id":"acme"');
    expect(stdout).toMatch(/"token":"ao_[a-z0-9]+_/);
  }, 60_000);

  it('stops the server when the pid of `npm start` is killed: the port is free again', async () => {
    onTestFailed(() => console.error(output));
    await stop();
    expect(await portAnswers(PORT)).toBe(false);
  }, 30_000);
});
