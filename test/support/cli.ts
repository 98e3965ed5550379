import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NODE, SVC_BIN, runSvc } from './process.ts';

/**
 * The `svc` client as a user runs it: a real process (non-TTY, so the scripted paths apply) with its own config
 * directory. `cli()` runs a command to its end; `spawnCli()` keeps it running and lets a test wait on its output.
 */
export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout parsed as one JSON document. */
  json<T = any>(): T;
  /** stdout parsed as NDJSON lines. */
  lines<T = any>(): T[];
}

export const tempDir = (prefix = 'svc-cli-') => mkdtempSync(join(tmpdir(), prefix));

export async function cli(args: string[], env: Record<string, string>): Promise<CliResult> {
  const r = await runSvc(args, env);
  return {
    ...r,
    json: () => JSON.parse(r.stdout),
    lines: () => r.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l)),
  };
}

export interface CliProcess {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the first match of `pattern` in stdout or stderr (re-checked as output arrives). */
  waitFor(stream: 'stdout' | 'stderr', pattern: RegExp): Promise<RegExpExecArray>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function spawnCli(args: string[], env: Record<string, string>): CliProcess {
  const child = spawn(NODE, [SVC_BIN, ...args], { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const out = { stdout: '', stderr: '' };
  const waiters = new Set<() => void>();
  child.stdout!.on('data', (d) => ((out.stdout += d), waiters.forEach((w) => w())));
  child.stderr!.on('data', (d) => ((out.stderr += d), waiters.forEach((w) => w())));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  return {
    child,
    stdout: () => out.stdout,
    stderr: () => out.stderr,
    exited,
    waitFor(stream, pattern) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const m = pattern.exec(out[stream]);
          if (m) {
            waiters.delete(check);
            resolve(m);
          }
        };
        waiters.add(check);
        exited.then(() => setTimeout(() => waiters.has(check) && reject(new Error(`svc exited before ${pattern} appeared on ${stream}:\n${out.stdout}\n${out.stderr}`)), 50));
        check();
      });
    },
  };
}

export function readConfig(dir: string): any {
  return JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
}

export const modeOf = (path: string) => statSync(path).mode & 0o777;

/** A dashboard session in the conductor's own dashboard: signs in with a key and keeps the cookie. */
export async function dashboardSession(base: string, key: string) {
  const res = await fetch(`${base}/dashboard/sign-in`, { method: 'POST', body: new URLSearchParams({ key, next: '/dashboard' }), redirect: 'manual' });
  if (res.status !== 303) throw new Error(`sign-in failed: ${res.status} ${await res.text()}`);
  const cookie = res.headers.get('set-cookie')!.split(';')[0];
  const get = (path: string) => fetch(base + path, { headers: { cookie }, redirect: 'manual' });
  const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
  return {
    cookie,
    get,
    async decideDevice(userCode: string, decision: 'approve' | 'deny'): Promise<Response> {
      const page = await get(`/device?code=${encodeURIComponent(userCode)}`);
      const csrf = csrfOf(await page.text());
      return fetch(`${base}/device`, { method: 'POST', headers: { cookie }, body: new URLSearchParams({ code: userCode, csrf, decision }), redirect: 'manual' });
    },
  };
}

/**
 * A stand-in API for the answers our own server never gives (an older server without /api/whoami, a 503, a probe that
 * never answers): `routes` maps `METHOD /path` to a status and JSON body, or to `hang` (never answers).
 */
export interface FakeApi {
  url: string;
  requests: Array<{ method: string; path: string; authorization: string | undefined; body: string }>;
  close(): Promise<void>;
}

export async function startFakeApi(routes: Record<string, { status: number; body?: unknown; headers?: Record<string, string> } | 'hang'>): Promise<FakeApi> {
  const { createServer } = await import('node:http');
  const requests: FakeApi['requests'] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const path = (req.url ?? '/').split('?')[0];
      requests.push({ method: req.method ?? 'GET', path, authorization: req.headers.authorization, body });
      const route = routes[`${req.method} ${path}`];
      if (route === 'hang') return;
      const { status, body: out, headers } = route ?? { status: 404, body: { error: `no route for ${req.method} ${path}` }, headers: {} };
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(out ?? {}));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}
