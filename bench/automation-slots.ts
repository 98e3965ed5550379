/**
 * Time from an automation's slot to its run starting (issue 19): an every-second automation on the `demo:echo` model
 * runs for `--seconds` on the all-in-one server (its own PostgreSQL) and, when one answers, on two conductors and a
 * runner over the PostgreSQL server. Per fired slot: the firing's claim (`firedAt`) and its run row (`startedAt`),
 * each minus the slot (`scheduledFor`). Usage: npm run bench:automations [-- --seconds 30]
 */
import { parseArgs } from 'node:util';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fmt, freePort, percentile, startProcess, type Proc } from './lib.ts';
import { adminUrl, answers, createTestDatabase } from '../test/support/pg.ts';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '30' } } });
const seconds = Number(values.seconds);
const KEY = 'ao_test_benchbenchbenchbench0001';
const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };

async function api(url: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(url + path, { method: body === undefined ? 'GET' : 'POST', headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  if (res.status >= 300) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'svc-bench-automations-'));
  chmodSync(d, 0o711); // as root, the embedded PostgreSQL's OS user walks through it
  dirs.push(d);
  return d;
};

const summary = (ms: number[]) => {
  const s = [...ms].sort((a, b) => a - b);
  return `p50 ${fmt(percentile(s, 50))} / p99 ${fmt(percentile(s, 99))} / max ${fmt(s.at(-1) ?? NaN)} ms`;
};

async function measure(label: string, url: string) {
  await api(url, '/api/profiles', { name: 'bench-tick', runtime: 'general', model: 'demo:echo' });
  const a = await api(url, '/api/automations', { name: 'bench-tick', profile: 'bench-tick', prompt: 'tick', cron: '* * * * * *' });
  await new Promise((r) => setTimeout(r, seconds * 1000));
  await api(url, `/api/automations/${a.id}/stop`, {});
  const firings = (await api(url, `/api/automations/firings?automation=${a.id}&limit=1000`)) as any[];
  const fired = firings.filter((f) => f.outcome !== 'skipped' && f.sessionId !== null);
  const claim: number[] = [];
  const start: number[] = [];
  for (const f of fired) {
    const run = await api(url, `/api/runs/${f.runId}`);
    claim.push(Date.parse(f.firedAt) - Date.parse(f.scheduledFor));
    start.push(Date.parse(run.startedAt) - Date.parse(f.scheduledFor));
  }
  const skipped = firings.length - fired.length;
  console.log(`${label}: ${firings.length} slots in ${seconds} s (${skipped} skipped or not started)`);
  console.log(`  slot → firing claimed: ${summary(claim)}`);
  console.log(`  slot → run started:    ${summary(start)}`);
}

async function withProcs(starts: Array<() => Promise<Proc>>, fn: (procs: Proc[]) => Promise<void>) {
  const procs: Proc[] = [];
  try {
    for (const s of starts) procs.push(await s());
    await fn(procs);
  } finally {
    for (const p of procs.reverse()) await p.stop();
  }
}

console.log(`every-second automation (demo:echo), ${seconds} s per setup`);
await withProcs([() => startProcess([], { SVC_BOOTSTRAP_TOKEN: KEY, SVC_DATA_DIR: tempDir() })], ([svc]) => measure('all-in-one, embedded PostgreSQL', svc.url));
if (await answers(adminUrl())) {
  const db = await createTestDatabase();
  try {
    const INTERNAL = 'bench-internal-token-0123456789abcdef';
    const port = await freePort();
    const runnerUrl = `http://127.0.0.1:${port}`;
    const conductor = () => startProcess(['--role=conductor'], { SVC_INTERNAL_TOKEN: INTERNAL, DATABASE_URL: db.url, SVC_RUNNERS: runnerUrl, SVC_BOOTSTRAP_TOKEN: KEY, SVC_DATA_DIR: tempDir() });
    await withProcs([() => startProcess(['--role=worker'], { SVC_INTERNAL_TOKEN: INTERNAL, MODE: 'general', SVC_STATE_DIR: tempDir() })], ([worker]) =>
      withProcs(
        [() => startProcess(['--role=runner', `--port=${port}`], { SVC_INTERNAL_TOKEN: INTERNAL, SVC_WORKER_URL: worker.url, SVC_RUNNER_PUBLIC_URL: runnerUrl, SVC_DATA_DIR: tempDir() }), conductor, conductor],
        ([, c1]) => measure('two conductors, runner, worker on the PostgreSQL server', c1.url),
      ),
    );
  } finally {
    await db.drop();
  }
} else console.log('PostgreSQL server: not reachable, skipped');
for (const d of dirs) rmSync(d, { recursive: true, force: true });
