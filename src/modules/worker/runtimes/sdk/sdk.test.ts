import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runEvent, type RunEvent } from '../../../../contracts/run-event.ts';
import { childEnv, childTraceEnv, otlpTracesEndpoint } from './child-env.ts';
import { allowedToolsByServer, mcpServersOf } from './mcp.ts';
import { APPROVAL_HOLD_MAX_S } from '../../../../contracts/approvals.ts';
import { codexOptions } from '../runtime-b/options.ts';
import { createSessionStore, sessionFolderName } from './session-store.ts';
import { settle } from './settle.ts';

async function collect(source: AsyncIterable<RunEvent>): Promise<RunEvent[]> {
  const out: RunEvent[] = [];
  for await (const event of source) out.push(event);
  return out;
}

/** An SDK stream that yields `messages`, then throws when `fail` is set (as both SDKs do after a failed turn). */
async function* sdkStream(messages: string[], fail?: string): AsyncGenerator<string> {
  for (const m of messages) yield m;
  if (fail) throw new Error(fail);
}

const translate = (m: string) => (m === 'failed' ? [runEvent('error', { message: 'provider said no' })] : m === 'done' ? [runEvent('result', { message: 'ok' })] : [runEvent('progress', { message: m })]);
const opts = (signal = new AbortController().signal) => ({ signal, stop: () => {}, describe: (err: unknown) => `thrown: ${(err as Error).message}` });

describe('settling an SDK stream', () => {
  it('keeps the first terminal and drops the throw that follows it', async () => {
    const events = await collect(settle(sdkStream(['a', 'failed', 'late'], 'exited with code 1'), translate, opts()));
    expect(events.map((e) => [e.type, e.message])).toEqual([['progress', 'a'], ['error', 'provider said no']]);
  });

  it('turns a throw without a terminal into one error', async () => {
    const events = await collect(settle(sdkStream(['a'], 'spawn failed'), translate, opts()));
    expect(events.map((e) => [e.type, e.message])).toEqual([['progress', 'a'], ['error', 'thrown: spawn failed']]);
  });

  it('says the run was cancelled when the signal aborted it', async () => {
    const abort = new AbortController();
    abort.abort();
    expect((await collect(settle(sdkStream([], 'AbortError'), translate, opts(abort.signal)))).at(-1)?.message).toBe('run cancelled');
  });

  it('ends a stream without a terminal in an error', async () => {
    expect((await collect(settle(sdkStream(['a']), translate, opts()))).at(-1)).toMatchObject({ type: 'error', message: 'the runtime ended without a result' });
  });
});

describe('SDK child environment', () => {
  const paths = { root: '/s', config: '/s/config', home: '/s/home', tmp: '/s/tmp', work: '/s/work' };

  it('passes PATH, the session HOME and TMPDIR, the needed provider variables and allowed names only', () => {
    const env = childEnv({
      host: { PATH: '/usr/bin', HOME: '/root', SVC_INTERNAL_TOKEN: 'secret', EXTRA: 'x', MISSING_IS_SKIPPED: undefined },
      paths,
      providerEnv: { OPENAI_API_KEY: 'sk', ANTHROPIC_API_KEY: 'ak', HTTPS_PROXY: 'http://proxy:3128' },
      providerVars: ['OPENAI_API_KEY'],
      allow: ['EXTRA', 'MISSING_IS_SKIPPED', 'HOME'],
      own: { CODEX_HOME: '/s/config' },
    });
    expect(env).toEqual({ PATH: '/usr/bin', HOME: '/s/home', TMPDIR: '/s/tmp', OPENAI_API_KEY: 'sk', HTTPS_PROXY: 'http://proxy:3128', EXTRA: 'x', CODEX_HOME: '/s/config' });
  });

  it('gives a child the OTEL_* variables and the run span as TRACEPARENT only when the worker exports traces', () => {
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    expect(childTraceEnv(undefined, traceparent)).toEqual({});
    expect(childTraceEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }, traceparent)).toEqual({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', TRACEPARENT: traceparent });
    expect(childTraceEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }, undefined)).toEqual({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' });
  });

  it('resolves the OTLP/HTTP traces endpoint as the SDKs do', () => {
    expect(otlpTracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/' })).toBe('http://c:4318/v1/traces');
    expect(otlpTracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://t:9/x' })).toBe('http://t:9/x');
    expect(otlpTracesEndpoint({ OTEL_TRACES_EXPORTER: 'otlp' })).toBe('http://localhost:4318/v1/traces');
  });
});

describe('SDK session folders', () => {
  const stateDir = mkdtempSync(join(tmpdir(), 'svc-store-'));
  afterAll(() => rmSync(stateDir, { recursive: true, force: true }));

  it('keeps safe session ids as folder names and hashes anything else', () => {
    expect(sessionFolderName('sess-abc_1')).toBe('sess-abc_1');
    expect(sessionFolderName('../../etc')).toMatch(/^=[0-9a-f]{40}$/);
    expect(sessionFolderName('a/b')).not.toBe(sessionFolderName('a\\b'));
  });

  it('replaces a session with imported files and its runtime id, leaving no staging folders', async () => {
    const store = createSessionStore(stateDir, 'runtime_b');
    await store.prepare('sess-1');
    await store.setRuntimeSessionId('sess-1', 'old-thread');
    await store.replace('sess-1', [{ path: 'sessions/r.jsonl', data: new TextEncoder().encode('new\n') }], 'new-thread');
    expect(await store.runtimeSessionId('sess-1')).toBe('new-thread');
    expect(readFileSync(join(store.paths('sess-1').config, 'sessions/r.jsonl'), 'utf8')).toBe('new\n');
    expect(readdirSync(join(stateDir, 'runtime_b'))).toEqual(['sess-1']);
  });

  it('lets one run or import hold a session at a time', () => {
    const store = createSessionStore(stateDir, 'runtime_a');
    const release = store.lock('sess-2');
    expect(() => store.lock('sess-2')).toThrow(/busy/);
    release();
    expect(() => store.lock('sess-2')()).not.toThrow();
  });
});

describe('SDK MCP servers', () => {
  const req = (mcpServers: Array<{ name: string; url: string }>) => ({ sessionMcpUrl: 'http://runner/mcp', mcpServers }) as never;

  it('puts the session toolkit first as svc and skips a profile server that would shadow it', () => {
    const { servers, notes } = mcpServersOf(req([{ name: 'svc', url: 'http://x/mcp' }, { name: 'my tools', url: 'http://y/mcp' }]));
    expect(servers.map((s) => s.name)).toEqual(['svc', 'my_tools']);
    expect(notes.join(' ')).toMatch(/MCP server svc skipped/);
  });

  it('maps the profile allowlist onto servers, ignoring selectors', () => {
    const { servers } = mcpServersOf(req([{ name: 'ext', url: 'http://x/mcp' }]));
    expect(allowedToolsByServer(['@default'], servers)).toBeUndefined();
    expect(Object.fromEntries(allowedToolsByServer(['echo', 'ext__read', '@default'], servers)!)).toEqual({ svc: ['echo'], ext: ['read'] });
  });

  it("gives Codex a call timeout that outlasts an approval's hold on the session toolkit and the servers the runner fronts", () => {
    const fronted = { name: 'docs', url: 'http://runner/mcp/server/docs', platform: true, callTimeoutMs: 3_900_000 };
    const { servers } = mcpServersOf({ sessionMcpUrl: 'http://runner/mcp', mcpServers: [fronted, { name: 'other', url: 'http://z/mcp' }] } as never);
    const paths = { root: '/s', config: '/s/c', home: '/s/h', tmp: '/s/t', work: '/s/w' };
    const options = codexOptions({ req: { profile: { name: 'p', runtime: 'runtime_b' } } as never, config: { allowHostTools: false, childEnvAllow: [] } as never, providerEnv: { OPENAI_API_KEY: 'k' }, host: {}, paths, servers });
    const table = (options.config as { mcp_servers: Record<string, { tool_timeout_sec?: number }> }).mcp_servers;
    expect(table.svc.tool_timeout_sec).toBeGreaterThan(APPROVAL_HOLD_MAX_S);
    expect(table.docs.tool_timeout_sec).toBe(3900);
    expect(table.other.tool_timeout_sec).toBeUndefined();
  });
});
