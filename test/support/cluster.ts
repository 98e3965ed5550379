import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase } from './pg.ts';
import { startFakeProvider, type FakeProvider } from './fake-provider.ts';
import { startSvcProcess, type SvcProcess } from './process.ts';
import { freePort } from './listen.ts';

/**
 * A role-split svc cluster of real processes on real ports: N conductors sharing one PostgreSQL database, M runners
 * (each on a port chosen before it starts, so `SVC_RUNNER_PUBLIC_URL` equals the URL the conductors use), one worker
 * on the fake model provider. Every node can be killed and restarted on the same port and with the same identity.
 */
export const INTERNAL_TOKEN = 'cluster-internal-token';
export const OWNER_KEY = 'ao_test_clusterclustercluster0001';
export const MODEL = 'openai-compatible:fake-model';
/** Replicas of one deployment share their secrets: key hashes and run tokens must verify on every replica. */
export const PEPPER = 'cluster-pepper-0123456789abcdef';

export interface ClusterNode {
  name: string;
  /** Fixed for the node's life: restarts reuse the port. */
  url: string;
  port: number;
  proc: SvcProcess | undefined;
  /**
   * Starts the process (again) on the node's port. A restarted runner or worker starts on an empty data folder (a
   * fresh machine) unless `keepDisk`: then on the one it had (the same machine, rebooted).
   */
  start(opts?: { keepDisk?: boolean }): Promise<void>;
  /** Stops the process with `signal` (SIGKILL: a crash) and waits for it to exit. */
  kill(signal?: NodeJS.Signals): Promise<void>;
}

export interface Cluster {
  fake: FakeProvider;
  databaseUrl: string;
  worker: ClusterNode;
  runners: ClusterNode[];
  conductors: ClusterNode[];
  /** An authenticated request (owner key of tenant `default`) to a conductor. */
  api(conductor: ClusterNode, path: string, init?: RequestInit & { json?: unknown }): Promise<Response>;
  /** An internal request to a runner (internal token, tenant `default`). */
  runnerApi(runner: ClusterNode, path: string): Promise<Response>;
  /** Every node's output so far, for failure messages. */
  logs(): string;
  stop(): Promise<void>;
}

export interface ClusterOptions {
  conductors?: number;
  runners?: number;
  leaseTtlMs?: number;
  reconcileMs?: number;
  /** Runners get SVC_CONDUCTOR_URL (the first conductor's URL), so they announce themselves to it when they start. */
  announce?: boolean;
  /** Extra variables for every node (e.g. OTEL_* to export traces). */
  env?: Record<string, string>;
}


export async function startCluster(opts: ClusterOptions = {}): Promise<Cluster> {
  const dirs: string[] = [];
  const tempDir = (prefix: string) => {
    const d = mkdtempSync(join(tmpdir(), `svc-cluster-${prefix}-`));
    dirs.push(d);
    return d;
  };
  const nodes: ClusterNode[] = [];
  const logsOf = new Map<ClusterNode, () => string>();
  const fake = await startFakeProvider();
  const db = await createTestDatabase();

  async function node(name: string, role: string, env: (url: string, keepDisk: boolean) => Record<string, string>): Promise<ClusterNode> {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const earlier: string[] = [];
    const n: ClusterNode = {
      name,
      url,
      port,
      proc: undefined,
      async start(o = {}) {
        if (n.proc) earlier.push(n.proc.output() + `(exit ${n.proc.child.exitCode ?? n.proc.child.signalCode})\n`);
        n.proc = await startSvcProcess([`--role=${role}`, `--port=${port}`], { SVC_INTERNAL_TOKEN: INTERNAL_TOKEN, ...opts.env, ...env(url, o.keepDisk === true) });
        if (n.proc.url !== url) throw new Error(`${name} listens on ${n.proc.url}, expected ${url}`);
      },
      async kill(signal = 'SIGKILL') {
        await n.proc?.stop(signal);
      },
    };
    nodes.push(n);
    logsOf.set(n, () => [...earlier, n.proc?.output() ?? '(not started)'].join('----- restarted\n'));
    return n;
  }

  const stop = async () => {
    await Promise.all(nodes.map((n) => n.kill('SIGKILL')));
    await fake.close();
    await db.drop().catch(() => {});
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  };

  try {
    const worker = await node('worker', 'worker', () => ({
      MODE: 'general',
      SVC_STATE_DIR: tempDir('worker'),
      OPENAI_COMPATIBLE_BASE_URL: fake.url,
      OPENAI_COMPATIBLE_API_KEY: 'x',
    }));
    await worker.start();

    // conductors' ports are known before anything starts: runners that announce themselves are told where
    const conductorUrl: { value?: string } = {};
    const runners = await Promise.all(
      Array.from({ length: opts.runners ?? 2 }, (_, i) => {
        let disk: string | undefined;
        return node(`runner-${i}`, 'runner', (url, keepDisk) => ({
          SVC_WORKER_URL: worker.url,
          SVC_RUNNER_PUBLIC_URL: url,
          SVC_DATA_DIR: (disk = keepDisk && disk ? disk : tempDir(`runner-${i}`)),
          // at info level their output says when the announcement went through (tests wait on that line)
          ...(opts.announce && conductorUrl.value ? { SVC_CONDUCTOR_URL: conductorUrl.value, SVC_LOG_LEVEL: 'info' } : {}),
        }));
      }),
    );

    const shared = {
      DATABASE_URL: db.url,
      SVC_RUNNERS: runners.map((r) => r.url).join(','),
      SVC_BOOTSTRAP_TOKEN: OWNER_KEY,
      AGENT_API_KEY_PEPPER: PEPPER,
      SVC_RUN_TOKEN_SECRET: 'cluster-run-token-secret-0123456789',
      // replicas of one deployment share the key secrets are sealed with (the Helm chart's one Secret): what one
      // conductor seals (a webhook's signing secret, a provider key), another opens
      SVC_SECRETS_KEY: 'cluster-secrets-key-0123456789abcdef',
      SVC_LEASE_TTL_MS: String(opts.leaseTtlMs ?? 1500),
      SVC_RECONCILE_MS: String(opts.reconcileMs ?? 300),
    };
    const conductors = await Promise.all(
      Array.from({ length: opts.conductors ?? 2 }, (_, i) => {
        const name = `conductor-${String.fromCharCode(97 + i)}`;
        const dataDir = tempDir(name);
        return node(name, 'conductor', () => ({ ...shared, SVC_INSTANCE_ID: name, SVC_DATA_DIR: dataDir }));
      }),
    );
    conductorUrl.value = conductors[0]?.url;
    await Promise.all(runners.map((r) => r.start()));
    // replicas boot at the same time, as they do in a deployment (migrations and bootstrap race)
    await Promise.all(conductors.map((c) => c.start()));

    return {
      fake,
      databaseUrl: db.url,
      worker,
      runners,
      conductors,
      api(conductor, path, init = {}) {
        const { json, ...rest } = init;
        const headers = new Headers(rest.headers);
        headers.set('authorization', `Bearer ${OWNER_KEY}`);
        if (json !== undefined) headers.set('content-type', 'application/json');
        return fetch(conductor.url + path, { ...rest, headers, body: json !== undefined ? JSON.stringify(json) : rest.body });
      },
      runnerApi(runner, path) {
        return fetch(runner.url + path, { headers: { 'X-Svc-Internal-Token': `Bearer ${INTERNAL_TOKEN}`, 'X-Svc-Tenant': 'default' } });
      },
      logs: () => nodes.map((n) => `===== ${n.name} (${n.url})\n${logsOf.get(n)!()}`).join('\n'),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
