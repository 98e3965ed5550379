import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSvc, type TestSvc } from '../support/svc.ts';
import { cli, modeOf, readConfig, tempDir } from '../support/cli.ts';
import { listen } from '../support/listen.ts';

/** The client's config file and context rules (seed 001, "Command-line client"), through the real binary. */
const KEY = 'ao_test_bootstrapbootstrapbootstrap01';

function writeConfig(dir: string, config: unknown, mode = 0o600): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, 'config.json');
  writeFileSync(path, JSON.stringify(config), { mode });
  chmodSync(path, mode);
  return path;
}

describe('svc client config', () => {
  let svc: TestSvc;
  beforeAll(async () => {
    svc = await startTestSvc();
  });
  afterAll(async () => {
    await svc?.stop();
  });

  it('saves under $SVC_CONFIG_DIR, creating the directory 0700 and the file 0600', async () => {
    const dir = join(tempDir(), 'nested', 'svc');
    const r = await cli(['auth', 'login', '--with-token', KEY, '--api-url', svc.url], { SVC_CONFIG_DIR: dir });
    expect(r.code, r.stderr).toBe(0);
    expect(modeOf(dir)).toBe(0o700);
    expect(modeOf(join(dir, 'config.json'))).toBe(0o600);
    expect(readConfig(dir)).toEqual({ currentContext: 'default', contexts: { default: { apiUrl: svc.url, apiKey: KEY } } });
  });

  it('falls back to $XDG_CONFIG_HOME/svc, then to ~/.config/svc when XDG_CONFIG_HOME is empty', async () => {
    const xdg = tempDir();
    expect((await cli(['login', '--with-token', KEY, '--api-url', svc.url], { XDG_CONFIG_HOME: xdg })).code).toBe(0);
    expect(readConfig(join(xdg, 'svc')).contexts.default.apiKey).toBe(KEY);
    const home = tempDir();
    expect((await cli(['login', '--with-token', KEY, '--api-url', svc.url], { XDG_CONFIG_HOME: '', HOME: home })).code).toBe(0);
    expect(readConfig(join(home, '.config', 'svc')).contexts.default.apiKey).toBe(KEY);
  });

  it('warns with `chmod 600` on every load of a file readable by group or others, and not once it is 0600', async () => {
    const dir = tempDir();
    const path = writeConfig(dir, { currentContext: 'default', contexts: { default: { apiUrl: svc.url, apiKey: KEY } } }, 0o644);
    for (const args of [['context', 'list'], ['context', 'show']]) {
      const r = await cli(args, { SVC_CONFIG_DIR: dir });
      expect(r.code).toBe(0);
      expect(r.stderr).toContain(`chmod 600 ${path}`);
    }
    chmodSync(path, 0o600);
    expect((await cli(['context', 'list'], { SVC_CONFIG_DIR: dir })).stderr).not.toContain('chmod');
  });

  it('selects --context, then SVC_CONTEXT, then currentContext, then "default"', async () => {
    const dir = tempDir();
    const contexts = Object.fromEntries(['a', 'b', 'c', 'default'].map((n) => [n, { apiUrl: `http://${n}.example:1` }]));
    writeConfig(dir, { currentContext: 'c', contexts });
    const shown = async (args: string[], env: Record<string, string> = {}) => (await cli(['context', 'show', '--json', ...args], { SVC_CONFIG_DIR: dir, ...env })).json().name;
    expect(await shown([])).toBe('c');
    expect(await shown([], { SVC_CONTEXT: 'b' })).toBe('b');
    expect(await shown(['--context', 'a'], { SVC_CONTEXT: 'b' })).toBe('a');
    writeConfig(dir, { contexts });
    expect(await shown([])).toBe('default');
  });

  it('refuses an absent context (exit 2) unless SVC_API_URL and SVC_API_KEY are both set', async () => {
    const dir = tempDir();
    writeConfig(dir, { currentContext: 'default', contexts: { default: { apiUrl: svc.url, apiKey: KEY } } });
    const absent = await cli(['whoami', '--context', 'nope'], { SVC_CONFIG_DIR: dir });
    expect(absent.code).toBe(2);
    expect(absent.stderr).toMatch(/context "nope" does not exist \(contexts: default\)/);
    expect((await cli(['whoami'], { SVC_CONFIG_DIR: dir, SVC_CONTEXT: 'nope', SVC_API_URL: svc.url })).code).toBe(2);
    const envOnly = await cli(['whoami', '--json', '--context', 'nope'], { SVC_CONFIG_DIR: dir, SVC_API_URL: svc.url, SVC_API_KEY: KEY });
    expect(envOnly.code, envOnly.stderr).toBe(0);
    expect(envOnly.json()).toMatchObject({ context: 'nope', tenantId: 'default' });
  });

  it('applies environment overrides and marks baked-in defaults', async () => {
    const dir = tempDir();
    const nothing = await cli(['context', 'show'], { SVC_CONFIG_DIR: dir });
    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toMatch(/not configured/);

    const keyOnly = await cli(['context', 'show', '--json'], { SVC_CONFIG_DIR: dir, SVC_API_KEY: KEY });
    expect(keyOnly.json()).toEqual({
      name: 'default',
      apiUrl: 'http://127.0.0.1:8080',
      gatewayUrl: null,
      dashboardUrl: 'http://127.0.0.1:8080',
      apiKey: 'ao_test_boot…ap01',
      defaults: ['apiUrl', 'dashboardUrl'],
    });
    const plain = await cli(['context', 'show'], { SVC_CONFIG_DIR: dir, SVC_API_KEY: KEY });
    expect(plain.stdout).toContain('apiUrl: http://127.0.0.1:8080 (default)\n');
    expect(plain.stdout).toContain('dashboardUrl: http://127.0.0.1:8080 (default)\n');

    writeConfig(dir, { currentContext: 'default', contexts: { default: { apiUrl: 'http://stored.example:1', apiKey: 'ao_test_storedstoredstoredstored' } } });
    const overridden = await cli(['context', 'show', '--json'], {
      SVC_CONFIG_DIR: dir,
      SVC_API_URL: 'http://env.example:2/',
      SVC_API_KEY: KEY,
      SVC_GATEWAY_URL: 'http://gw.example:3',
      SVC_DASHBOARD_URL: 'http://dash.example:4',
    });
    expect(overridden.json()).toEqual({ name: 'default', apiUrl: 'http://env.example:2', gatewayUrl: 'http://gw.example:3', dashboardUrl: 'http://dash.example:4', apiKey: 'ao_test_boot…ap01', defaults: [] });
    // A self-hosted API URL without a dashboard URL: the conductor serves its own dashboard pages.
    const derived = await cli(['context', 'show', '--json'], { SVC_CONFIG_DIR: dir });
    expect(derived.json()).toMatchObject({ apiUrl: 'http://stored.example:1', dashboardUrl: 'http://stored.example:1', apiKey: 'ao_test_stor…ored', defaults: [] });
  });

  it('lists contexts sorted by name with the current one marked and keys masked', async () => {
    const dir = tempDir();
    writeConfig(dir, {
      currentContext: 'prod',
      contexts: { prod: { apiUrl: 'https://api.example', apiKey: KEY, gatewayUrl: 'https://gw.example' }, dev: { apiUrl: 'http://127.0.0.1:8080' }, bare: {} },
    });
    const plain = await cli(['context', 'list'], { SVC_CONFIG_DIR: dir });
    expect(plain.stdout).toBe('\tbare\t-\t-\n\tdev\thttp://127.0.0.1:8080\t-\n*\tprod\thttps://api.example\tao_test_boot…ap01\n');
    expect((await cli(['context', 'list', '--json'], { SVC_CONFIG_DIR: dir })).json()).toEqual([
      { name: 'bare', current: false, apiUrl: null, gatewayUrl: null, hasKey: false },
      { name: 'dev', current: false, apiUrl: 'http://127.0.0.1:8080', gatewayUrl: null, hasKey: false },
      { name: 'prod', current: true, apiUrl: 'https://api.example', gatewayUrl: 'https://gw.example', hasKey: true },
    ]);
    expect((await cli(['context', 'list', '--json'], { SVC_CONFIG_DIR: tempDir() })).json()).toEqual([]);
  });

  it('switches contexts with `context use`, refusing unknown names, an empty config and a script without a name', async () => {
    const dir = tempDir();
    expect((await cli(['context', 'use', 'dev'], { SVC_CONFIG_DIR: dir })).code).toBe(2);
    writeConfig(dir, { currentContext: 'prod', contexts: { prod: {}, dev: {} } });
    const used = await cli(['context', 'use', 'dev', '--json'], { SVC_CONFIG_DIR: dir });
    expect(used.code).toBe(0);
    expect(used.stdout).toBe('Switched to context "dev".\n');
    expect(readConfig(dir).currentContext).toBe('dev');
    expect(modeOf(join(dir, 'config.json'))).toBe(0o600);
    const unknown = await cli(['context', 'use', 'staging'], { SVC_CONFIG_DIR: dir });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/context "staging" does not exist \(contexts: dev, prod\)/);
    const noName = await cli(['context', 'use'], { SVC_CONFIG_DIR: dir });
    expect(noName.code).toBe(2);
    expect(noName.stderr).toMatch(/name is required in scripts/);
    expect(readConfig(dir).currentContext).toBe('dev');
  });

  it('treats unknown flags and commands as usage errors (exit 2) and a corrupt file as a failure (exit 1)', async () => {
    const dir = tempDir();
    expect((await cli(['context', 'list', '--bogus'], { SVC_CONFIG_DIR: dir })).code).toBe(2);
    expect((await cli(['no-such-command'], { SVC_CONFIG_DIR: dir })).code).toBe(2);
    // the one meant, not the whole help
    const typo = await cli(['profilez'], { SVC_CONFIG_DIR: dir });
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('unknown command "profilez" (did you mean profiles?)');
    expect(typo.stderr).not.toContain('COMMANDS');
    expect((await cli(['automations', 'lsit'], { SVC_CONFIG_DIR: dir })).stderr).toContain('unknown command "lsit" (did you mean list?)');
    const flag = await cli(['context', 'list', '--jsn'], { SVC_CONFIG_DIR: dir });
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain('unknown option --jsn (did you mean --json?)');
    expect(flag.stderr).toContain('`svc context list --help` lists its options');
    writeFileSync(join(dir, 'config.json'), '{ not json', { mode: 0o600 });
    const corrupt = await cli(['context', 'list'], { SVC_CONFIG_DIR: dir });
    expect(corrupt.code).toBe(1);
    expect(corrupt.stderr).toContain(join(dir, 'config.json'));
    expect(existsSync(join(dir, 'config.json'))).toBe(true);
  });

  it('says what went wrong without a stack trace, and shows the stack with --debug', async () => {
    const notSvc = await listen(() => new Response('<html>a web server</html>', { headers: { 'content-type': 'text/html' } }));
    try {
      const env = { SVC_CONFIG_DIR: tempDir(), SVC_API_URL: notSvc.url, SVC_API_KEY: KEY };
      const plain = await cli(['whoami'], env);
      expect(plain.code).toBe(1);
      expect(plain.stderr).toContain(`${notSvc.url}/api/whoami answered 200 with something that is not JSON`);
      expect(plain.stderr).not.toMatch(/^\s+at /m);
      const debug = await cli(['whoami', '--debug'], env);
      expect(debug.code).toBe(1);
      expect(debug.stderr).toMatch(/^\s+at /m);
    } finally {
      await notSvc.close();
    }
  });
});
