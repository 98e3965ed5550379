import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { configureLogging } from '../../shared/log.ts';
import { startFakeProvider, modelRequests, lastUserPrompt, type FakeProvider } from '../../../test/support/fake-provider.ts';
import { startMcpServer, type TestMcpServer } from '../../../test/support/mcp-server.ts';
import { environOf, processesMentioning, waitForNoProcesses } from '../../../test/support/proc-table.ts';
import { startTestWorker, runBody, runToEnd, postRun, type TestWorker } from '../../../test/support/worker.ts';

configureLogging({ level: 'warn' });

/**
 * What keeps runtime_a and runtime_b apart from the host: the child's environment, the tools the model is offered,
 * and the optional SDK packages being loaded only when a run needs them.
 */
const CASES = [
  {
    runtime: 'runtime_a', model: 'claude-sonnet-4-5', binary: 'claude', ownKey: 'ANTHROPIC_API_KEY', otherKey: 'OPENAI_API_KEY',
    extCall: 'CALL_TOOL mcp__ext__echo {"message":"outside"}', override: 'anthropic:claude-haiku-4-5', keyHeader: (key: string) => ({ 'x-api-key': key }), shell: 'Bash',
  },
  {
    runtime: 'runtime_b', model: 'gpt-5.5', binary: 'codex', ownKey: 'OPENAI_API_KEY', otherKey: 'ANTHROPIC_API_KEY',
    extCall: 'CALL_TOOL mcp__ext/echo {"message":"outside"}', override: 'openai:gpt-5.5', keyHeader: (key: string) => ({ authorization: `Bearer ${key}` }), shell: 'exec_command',
  },
] as const;

// Each test launches Claude Code or Codex (a few hundred MB native binary); on a loaded two-core machine a cold start
// alone can take seconds, so these get a longer limit than the suite default. Seen once in many runs: with two such
// files in parallel, a Claude Code child never sent its model request; one retry keeps that third-party stall from
// failing the suite while a consistent failure still fails.
describe('SDK runtime isolation', { timeout: 90_000, retry: 1 }, () => {
  let fake: FakeProvider;
  let mcp: TestMcpServer;
  let ext: TestMcpServer;
  let root: string;
  const workers: TestWorker[] = [];
  const providerEnv = () => ({ ANTHROPIC_API_KEY: 'sk-ant-fake', ANTHROPIC_BASE_URL: fake.url, OPENAI_API_KEY: 'sk-fake', OPENAI_BASE_URL: fake.url });
  const start = async (hostEnv?: Record<string, string | undefined>, childEnvAllow: string[] = [], allowHostTools = false) => {
    const stateDir = mkdtempSync(join(root, 'worker-'));
    const w = await startTestWorker({ mode: 'all', stateDir, providerEnv: providerEnv(), childEnvAllow, allowHostTools }, { hostEnv });
    workers.push(w);
    return { ...w, stateDir };
  };
  const body = (runtime: 'runtime_a' | 'runtime_b', model: string, prompt: string, sessionId: string) =>
    runBody(prompt, { sessionId, model, sessionMcpUrl: mcp.url, profile: { runtime } });

  beforeAll(async () => {
    fake = await startFakeProvider();
    mcp = await startMcpServer();
    ext = await startMcpServer({ name: 'ext' });
    root = mkdtempSync(join(tmpdir(), 'svc-isolation-'));
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.close()));
  });
  afterAll(async () => {
    await Promise.all([fake.close(), mcp.close(), ext.close()]);
    rmSync(root, { recursive: true, force: true });
  });

  it.each(CASES)('connects $runtime to profile MCP servers with their headers, never on the command line', async ({ runtime, model, binary, extCall }) => {
    const w = await start();
    const token = `Bearer secret-header-${runtime}`;
    const mcpServers = [{ name: 'ext', transport: 'http', url: ext.url, headers: { authorization: token } }];
    const prompt = `SLOW_DELTAS 1000 50 ${runtime}-headers`;
    const abort = new AbortController();
    await postRun(w.url, { ...body(runtime, model, prompt, `sess-hdr-${runtime}`), mcpServers }, abort.signal);
    await fake.when(() => modelRequests(fake).find((r) => lastUserPrompt(r) === prompt));
    const child = processesMentioning(w.stateDir).find((p) => p.command.includes(binary));
    abort.abort();
    expect(child?.command).toContain(binary);
    expect(child?.command).not.toContain('secret-header');
    expect(ext.authorizations).toContain(token);
    expect(await waitForNoProcesses(w.stateDir)).toEqual([]);

    const events = await runToEnd(w.url, { ...body(runtime, model, extCall, `sess-ext-${runtime}`), mcpServers });
    expect(events.filter((e) => e.type === 'tool_result')).toEqual([expect.objectContaining({ toolName: 'ext__echo', isError: false })]);
    expect(ext.calls.at(-1)).toEqual({ name: 'echo', args: { message: 'outside' } });
  });

  it.each(CASES)('gives the $runtime child process only the allowed environment', async ({ runtime, model, binary, ownKey, otherKey }) => {
    const w = await start({ PATH: process.env.PATH, SVC_INTERNAL_TOKEN: 'canary-internal-token', ALLOWED_EXTRA: 'passed-through' }, ['ALLOWED_EXTRA']);
    const prompt = `SLOW_DELTAS 1000 50 ${runtime}-env`;
    const abort = new AbortController();
    await postRun(w.url, body(runtime, model, prompt, `sess-env-${runtime}`), abort.signal);
    await fake.when(() => modelRequests(fake).find((r) => lastUserPrompt(r) === prompt));
    const child = processesMentioning(w.stateDir).find((p) => p.command.includes(binary));
    const env = environOf(child!.pid);
    abort.abort();

    expect(env.ALLOWED_EXTRA).toBe('passed-through');
    expect(Object.values(env).join('\n')).not.toContain('canary-internal-token');
    expect(env[ownKey]).toBeTruthy();
    expect(env[otherKey]).toBeUndefined();
    expect(env.HOME.startsWith(w.stateDir)).toBe(true);
    expect(env.TMPDIR.startsWith(w.stateDir)).toBe(true);
    expect(await waitForNoProcesses(w.stateDir)).toEqual([]);
  });

  it.each(CASES)('runs $runtime on a per-run model override with its own key', async ({ runtime, override, keyHeader }) => {
    const w = await start();
    const runKey = `sk-run-only-${runtime}`;
    const events = await runToEnd(w.url, { ...body(runtime, 'profile-model', 'hello override', `sess-override-${runtime}`), modelOverride: { model: override, apiKey: runKey } });
    expect(events.at(-1)).toMatchObject({ type: 'result', message: 'FAKE-REPLY: hello override' });
    const request = modelRequests(fake).at(-1)!;
    expect(request.body.model).toBe(override.slice(override.indexOf(':') + 1));
    expect(request.headers).toMatchObject(keyHeader(runKey));
  });

  it.each(CASES)("runs $runtime on the profile's model with a run's own key only (a tenant's key on /api)", async ({ runtime, model, keyHeader }) => {
    const w = await start();
    const runKey = `sk-tenant-only-${runtime}`;
    const events = await runToEnd(w.url, { ...body(runtime, model, 'hello own key', `sess-key-only-${runtime}`), modelOverride: { apiKey: runKey } });
    expect(events.at(-1)).toMatchObject({ type: 'result', message: 'FAKE-REPLY: hello own key' });
    const request = modelRequests(fake).at(-1)!;
    expect(request.body.model).toBe(model);
    expect(request.headers).toMatchObject(keyHeader(runKey));
  });

  it.each(CASES)('gives $runtime back its host tools behind the break-glass switch', async ({ runtime, model, shell }) => {
    const w = await start(undefined, [], true);
    await runToEnd(w.url, body(runtime, model, 'which tools?', `sess-host-${runtime}`));
    expect(modelRequests(fake).at(-1)!.body.tools.map((t: { name?: string; type: string }) => t.name ?? t.type)).toContain(shell);
  });

  it('offers Claude Code no built-in host tools, only the session MCP tools', async () => {
    const w = await start();
    await runToEnd(w.url, body('runtime_a', 'claude-sonnet-4-5', 'which tools?', 'sess-tools-a'));
    const tools: string[] = modelRequests(fake).at(-1)!.body.tools.map((t: { name: string }) => t.name);
    expect(tools).toContain('mcp__svc__echo');
    expect(tools.filter((name) => !name.startsWith('mcp__svc__'))).toEqual([]);
  });

  it('offers Codex no shell, and its read-only sandbox refuses file patches', async () => {
    const w = await start();
    const patch = JSON.stringify('*** Begin Patch\n*** Add File: planted.txt\n+hi\n*** End Patch\n');
    const events = await runToEnd(w.url, body('runtime_b', 'gpt-5.5', `CALL_CUSTOM apply_patch ${patch}`, 'sess-tools-b'));

    const tools: string[] = modelRequests(fake).at(-2)!.body.tools.map((t: { name?: string; type: string }) => t.name ?? t.type);
    expect(tools.filter((name) => ['exec_command', 'write_stdin', 'shell', 'view_image'].includes(name))).toEqual([]);
    expect(events.at(-1)?.message).toMatch(/patch rejected: writing is blocked by read-only sandbox/);
    expect(readdirSync(join(w.stateDir, 'runtime_b', 'sess-tools-b', 'work'))).toEqual([]);
  });
});

describe('optional SDK packages', () => {
  const PACKAGES = { runtime_a: '@anthropic-ai/claude-agent-sdk', runtime_b: '@openai/codex-sdk' } as const;
  let loads: string[];
  const missing = (pkg: string) => async (): Promise<never> => {
    loads.push(pkg);
    throw Object.assign(new Error(`Cannot find package '${pkg}' imported from /app/src/modules/worker`), { code: 'ERR_MODULE_NOT_FOUND' });
  };

  it.each(Object.entries(PACKAGES))('ends a %s run with one error saying how to install the missing package %s', async (runtime, pkg) => {
    loads = [];
    const w = await startTestWorker(
      { mode: 'all', stateDir: '/nonexistent/svc-state', providerEnv: { ANTHROPIC_API_KEY: 'k', OPENAI_API_KEY: 'k' } },
      { sdkLoaders: { claude: missing(PACKAGES.runtime_a), codex: missing(PACKAGES.runtime_b) } },
    );
    try {
      expect((await fetch(`${w.url}/health`)).status).toBe(200);
      expect(loads).toEqual([]); // nothing is imported until a run needs it
      const events = await runToEnd(w.url, runBody('hi', { profile: { runtime: runtime as keyof typeof PACKAGES } }));
      const version = { runtime_a: '0.3.330', runtime_b: '0.163.0' }[runtime]; // package.json peerDependencies
      expect(events).toEqual([
        expect.objectContaining({ type: 'error', message: `${runtime} needs the optional package ${pkg}, which is not installed: run \`npm run install:runtimes\` in a clone of svc, or \`npm install ${pkg}@${version}\` beside an installed svc; or use another runtime` }),
      ]);
      expect(loads).toEqual([pkg]);
    } finally {
      await w.close();
    }
  });
});
