import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as jose from 'jose';
import { listen, type Listening } from '../support/listen.ts';
import { createTestDatabase } from '../support/pg.ts';
import { startSvcProcess, type SvcProcess } from '../support/process.ts';
import { readSse, type RunEventLike } from '../support/sse.ts';

/**
 * What the security suite shares: real `svc serve` processes with their own data folders, an identity provider
 * (JWKS on a port) that signs in users of any tenant, and running a profile's tool call through the conductor's API
 * on the fake model (`CALL_TOOL <name> <json>` in the prompt), read back from the run stream.
 */
export interface Served {
  proc: SvcProcess;
  url: string;
  dataDir: string;
  api(path: string, init?: RequestInit & { key?: string; json?: unknown }): Promise<Response>;
  stop(): Promise<void>;
}

export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `svc-security-${prefix}-`));
}

/**
 * `svc serve` with `args` in a data folder of its own (removed by `stop`). `database: true` gives it a fresh database
 * on the PostgreSQL server (dropped by `stop`); the embedded one takes long to start on a busy machine.
 */
export async function serve(args: string[], env: Record<string, string>, key?: string, opts: { database?: boolean } = {}): Promise<Served> {
  const dataDir = env.SVC_DATA_DIR ?? tempDir('data');
  const db = opts.database ? await createTestDatabase() : undefined;
  let proc: SvcProcess;
  try {
    proc = await startSvcProcess(args, { SVC_DATA_DIR: dataDir, ...(db ? { DATABASE_URL: db.url } : {}), ...env });
  } catch (err) {
    await db?.drop();
    throw err;
  }
  return {
    proc,
    url: proc.url,
    dataDir,
    api(path, init = {}) {
      const { key: k = key, json, ...rest } = init;
      const headers = new Headers(rest.headers);
      if (k) headers.set('authorization', `Bearer ${k}`);
      if (json !== undefined) headers.set('content-type', 'application/json');
      const method = rest.method ?? (json !== undefined ? 'POST' : 'GET');
      return fetch(proc.url + path, { ...rest, method, headers, body: json !== undefined ? JSON.stringify(json) : rest.body });
    },
    async stop() {
      await proc.stop('SIGKILL');
      await db?.drop().catch(() => {});
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** An identity provider: a JWKS on a port and the sign-in tokens it issues (claims `tenant_id`, `role`). */
export interface Idp {
  issuer: string;
  jwksUrl: string;
  token(tenantId: string, role?: string): Promise<string>;
  close(): Promise<void>;
}

export async function startIdp(): Promise<Idp> {
  const { publicKey, privateKey } = await jose.generateKeyPair('RS256');
  const jwk = { ...(await jose.exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  const http: Listening = await listen(() => Response.json({ keys: [jwk] }));
  const issuer = 'https://idp.security.test';
  return {
    issuer,
    jwksUrl: `${http.url}/jwks`,
    token: (tenantId, role = 'owner') =>
      new jose.SignJWT({ tenant_id: tenantId, role }).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).setIssuer(issuer).setSubject(`user-of-${tenantId}`).setExpirationTime('1h').sign(privateKey),
    close: () => http.close(),
  };
}

export interface ToolOutcome {
  /** What the tool answered: `structuredContent` of the MCP result (for run_command: stdout, stderr, exitCode, …). */
  value: Record<string, any>;
  isError: boolean;
  events: RunEventLike[];
}

/** Runs `profile` with a prompt that makes the fake model call `tool` once, and returns what the tool answered. */
export async function callThroughRun(svc: Served, key: string, profile: string, tool: string, input: Record<string, unknown>): Promise<ToolOutcome> {
  const started = await svc.api('/api/runs', { key, json: { profile, prompt: `CALL_TOOL ${tool} ${JSON.stringify(input)}` } });
  if (started.status !== 202) throw new Error(`run refused: ${started.status} ${await started.text()}`);
  const { runId } = (await started.json()) as { runId: string };
  const frames = await readSse(await svc.api(`/api/runs/${runId}/stream`, { key }));
  const events = frames.map((f) => f.event);
  const result = events.find((e) => e.type === 'tool_result') as (RunEventLike & { output?: any; isError?: boolean }) | undefined;
  if (!result) throw new Error(`no tool_result in the run: ${JSON.stringify(events)}`);
  return { value: result.output?.structuredContent ?? {}, isError: result.isError === true, events };
}

/** `run_command` through a run: the command's stdout and stderr together. */
export async function commandOutput(svc: Served, key: string, profile: string, command: string): Promise<string> {
  const { value, events } = await callThroughRun(svc, key, profile, 'run_command', { command });
  if (typeof value.stdout !== 'string') throw new Error(`run_command gave no output: ${JSON.stringify(events)}`);
  return `${value.stdout}\n${value.stderr ?? ''}`;
}
