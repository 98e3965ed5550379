import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.ts';
import { NODE, startSvcProcess, type SvcProcess } from '../support/process.ts';
import { readSse } from '../support/sse.ts';

/**
 * The boot bundle of a clone (bin/bundle.js): `svc serve` runs it when it is fresh, and the sandbox workers of a server
 * on the bundle run it too (`.svc-bundle/`, mounted into their sandbox with its inputs); SVC_NO_BUNDLE=1 runs the
 * sources, for the server and, passed on, for its workers.
 */
const ROOT = new URL('../../', import.meta.url).pathname;
const KEY = 'ao_test_bootbundlebootbundle0123';
let fake: FakeProvider;
const dirs: string[] = [];

beforeAll(() => {
  // what `npm start` does first: build the bundle unless it is fresh
  execFileSync(NODE, [join(ROOT, 'bin/bundle.js'), '--if-stale'], { stdio: 'inherit', timeout: 180_000 });
}, 200_000);
beforeAll(async () => {
  fake = await startFakeProvider();
});
afterAll(async () => {
  await fake?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function serve(env: Record<string, string>): Promise<SvcProcess> {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-boot-bundle-'));
  chmodSync(dataDir, 0o711); // as root, the embedded PostgreSQL's OS user walks through it
  dirs.push(dataDir);
  return startSvcProcess([], { SVC_DATA_DIR: dataDir, SVC_BOOTSTRAP_TOKEN: KEY, OPENAI_COMPATIBLE_BASE_URL: fake.url, OPENAI_COMPATIBLE_API_KEY: 'x', ...env });
}

/** A run of a sandbox profile; returns its last event and the environment of the worker process that ran it. */
async function sandboxRun(p: SvcProcess) {
  const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
  const created = await fetch(p.url + '/api/profiles', { method: 'POST', headers, body: JSON.stringify({ name: 'boxed', runtime: 'general', model: 'openai-compatible:fake-model', workerMode: 'sandbox' }) });
  expect(created.status, await created.clone().text()).toBe(201);
  const res = await fetch(p.url + '/api/runs', { method: 'POST', headers, body: JSON.stringify({ profile: 'boxed', prompt: 'hello from the bundle' }) });
  expect(res.status).toBe(202);
  const { runId, sessionId } = (await res.json()) as { runId: string; sessionId: string };
  const frames = await readSse(await fetch(`${p.url}/api/runs/${runId}/stream`, { headers }));
  const lease = (await (await fetch(`${p.url}/api/sessions/${sessionId}/worker`, { headers })).json()) as { workerId: string };
  const pid = workerPid(lease.workerId);
  return { last: frames.at(-1)!.event, worker: environOf(pid), bundleInside: bundleSeenBy(pid) };
}

/**
 * What bin/svc.js inside the worker's sandbox picks: bin/bundle.js's freshness check run on the sandbox's own view of
 * the program (`/proc/<pid>/root/opt/svc`), so a bundle input the substrate does not mount shows up here.
 */
function bundleSeenBy(pid: number): string | undefined {
  const code = `const m = await import(${JSON.stringify(`/proc/${pid}/root/opt/svc/bin/bundle.js`)}); process.stdout.write(m.freshBundle() ?? '')`;
  return execFileSync(NODE, ['--preserve-symlinks', '--input-type=module', '-e', code], { encoding: 'utf8' }) || undefined;
}

/** The worker process itself (`…/bin/svc.js serve --role=worker`), below the lease's pid (bubblewrap). */
function workerPid(workerId: string): number {
  const pending = [Number(/^process-(\d+)-/.exec(workerId)![1])];
  while (pending.length) {
    const pid = pending.shift()!;
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    if (argv.some((a) => a.endsWith('bin/svc.js')) && !argv[0].endsWith('bwrap')) return pid;
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
    if (children) pending.push(...children.split(/\s+/).map(Number));
  }
  throw new Error(`no worker process below ${workerId}`);
}

const environOf = (pid: number): Record<string, string> =>
  Object.fromEntries(
    readFileSync(`/proc/${pid}/environ`, 'utf8')
      .split('\0')
      .filter(Boolean)
      .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
  );

describe('the boot bundle', () => {
  it('serves from the bundle when it is fresh, and its sandbox workers run in bubblewrap on the same code', async () => {
    const p = await serve({});
    try {
      expect(p.output()).toMatch(/svc listening on http:\/\/\S+ \(roles: conductor,runner,worker; from the boot bundle\)/);
      const { last, worker, bundleInside } = await sandboxRun(p);
      expect(last).toMatchObject({ type: 'result', message: 'FAKE-REPLY: hello from the bundle' });
      expect(worker.SVC_NO_BUNDLE).toBeUndefined();
      expect(bundleInside).toMatch(/\/root\/opt\/svc\/\.svc-bundle\/b-\d+-\d+\/main\.mjs$/);
    } finally {
      await p.stop();
    }
  }, 120_000);

  it('runs the sources with SVC_NO_BUNDLE=1, and starts its sandbox workers on the sources too', async () => {
    const p = await serve({ SVC_NO_BUNDLE: '1' });
    try {
      expect(p.output()).toMatch(/svc listening on http:\/\/\S+ \(roles: conductor,runner,worker\)\n/);
      const { last, worker } = await sandboxRun(p);
      expect(last).toMatchObject({ type: 'result', message: 'FAKE-REPLY: hello from the bundle' });
      expect(worker.SVC_NO_BUNDLE).toBe('1'); // the bundle is there (fresh), but the worker runs what its runner runs
    } finally {
      await p.stop();
    }
  }, 120_000);
});
