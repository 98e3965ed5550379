import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Config } from '../../config/config.ts';
import { INTERNAL_TOKEN_HEADER, TENANT_HEADER } from '../../contracts/runner.ts';
import type { ProfileSpec } from '../../contracts/runner.wire.ts';
import { createRunner, type Runner, type RunnerDeps } from './runner.ts';

/** Test fixture for the runner's own unit tests: a runner with plain-object config, and a terse request helper. */
export const TEST_PUBLIC_URL = 'http://runner.test:7070';
/** The internal token of fixture runners; `call` sends it unless told otherwise. */
export const TEST_INTERNAL_TOKEN = 'fixture-internal-token';

/** A fresh, not yet created data dir per runner: the VFS creates directories only when a tool touches a file. */
export function testDataDir(): string {
  return join(tmpdir(), `svc-runner-test-${process.pid}-${randomUUID()}`);
}

export function runnerConfig(over: Partial<Config['runner']> = {}): Config['runner'] {
  return {
    publicUrl: TEST_PUBLIC_URL, workerUrl: undefined, workerUrlByRuntime: {}, stateCapBytes: 1024, dataDir: testDataDir(), conductorUrl: undefined, adoptGraceMs: 60_000,
    sandbox: 'bwrap', searchPath: process.env.PATH ?? '/usr/bin:/bin', ...over,
  };
}

/** A runner for unit tests; closing it also removes its data dir when the fixture made it. */
export function makeRunner(over: Omit<Partial<RunnerDeps>, 'config'> & { config?: Partial<Config['runner']> } = {}): Runner {
  const { config, ...rest } = over;
  const cfg = runnerConfig(config);
  const runner = createRunner({ internalToken: TEST_INTERNAL_TOKEN, publicUrl: TEST_PUBLIC_URL, version: '0.0.0-test', probeIntervalMs: 0, ...rest, config: cfg });
  if (!cfg.dataDir.startsWith(join(tmpdir(), 'svc-runner-test-'))) return runner;
  return {
    ...runner,
    async close() {
      await runner.close();
      await rm(cfg.dataDir, { recursive: true, force: true });
    },
  };
}

export interface CallOptions {
  tenant?: string;
  body?: unknown;
  /** The internal token to send: the fixture's by default, none with null. */
  token?: string | null;
  signal?: AbortSignal;
  headers?: Record<string, string>;
}

export function call(runner: Runner, method: string, path: string, o: CallOptions = {}): Promise<Response> {
  const headers: Record<string, string> = { ...o.headers };
  if (o.tenant !== undefined) headers[TENANT_HEADER] = o.tenant;
  const token = o.token === undefined ? TEST_INTERNAL_TOKEN : o.token;
  if (token !== null) headers[INTERNAL_TOKEN_HEADER] = `Bearer ${token}`;
  let body: string | undefined;
  if (o.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = typeof o.body === 'string' ? o.body : JSON.stringify(o.body);
  }
  return Promise.resolve(runner.app.request(path, { method, headers, body, signal: o.signal }));
}

export async function putProfile(runner: Runner, profile: Partial<ProfileSpec> & { name: string }, tenant?: string): Promise<void> {
  const res = await call(runner, 'POST', '/runner/profiles', { tenant, body: { profile: { runtime: 'general', ...profile } } });
  if (res.status !== 204) throw new Error(`putProfile: ${res.status} ${await res.text()}`);
}

export async function newSession(runner: Runner, profileName: string, tenant?: string): Promise<string> {
  const res = await call(runner, 'POST', '/runner/sessions', { tenant, body: { profileName } });
  if (res.status !== 201) throw new Error(`newSession: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { sessionId: string }).sessionId;
}

/** Reads a whole NDJSON response into parsed lines. */
export async function ndjsonLines<T = Record<string, unknown>>(res: Response): Promise<T[]> {
  const text = await res.text();
  return text.split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l) as T);
}

/** A URL on 127.0.0.1 where nothing listens (a port that was just free): connections are refused at once. */
export async function refusedUrl(): Promise<string> {
  const { createServer } = await import('node:net');
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

/** `POST /runner/sessions/{id}/toolkit/invoke`; the parsed body with the status. */
export async function invokeTool(runner: Runner, sessionId: string, toolName: string, input: unknown, tenant?: string): Promise<{ status: number; body: any }> {
  const res = await call(runner, 'POST', `/runner/sessions/${sessionId}/toolkit/invoke`, { tenant, body: { toolName, input } });
  return { status: res.status, body: await res.json() };
}
