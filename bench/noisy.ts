/**
 * Benchmark: noisy neighbours. Tenant A's agent runs a fork bomb, a memory hog, four CPU spinners and a
 * disk filler through `run_command`, over and over, while tenant B runs ordinary runs; it prints B's success rate and
 * B's dispatch latency (POST /api/runs → first SSE event) p50/p99 under that load beside its quiet p50/p99 measured in
 * the same run just before, and the runner's RSS. What holds A back is the runner's sandbox limits, with tenant A's
 * ceilings set through `PUT /api/tenants/a/limits`.
 *
 * Split roles as processes of this clone: the fake model provider, a worker, a runner and a conductor (its own
 * embedded PostgreSQL). The fake provider turns A's prompts (`CALL_TOOL run_command {…}`) into the tool calls.
 * `SVC_SANDBOX_*` variables of this shell reach the runner (its operator defaults and ceilings, SVC_SANDBOX_LIMITS).
 *
 * The hostile commands take a host down where nothing holds them, so the bench refuses to start unless the runner
 * reports memory, pids, CPU and disk enforced (GET /runner/info `limits`); `--force` starts it anyway, `--safe` swaps
 * in harmless commands (sleep, echo) to try the plumbing on any machine.
 *
 *   npm run bench:noisy -- [--seconds 30] [--quiet-runs 40] [--safe] [--force] [--only 'cpu,fork']
 */
import { parseArgs } from 'node:util';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fmt, freePort, percentile, rssMiB, sampleRss, startProcess, type Proc } from './lib.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '30' },
    'quiet-runs': { type: 'string', default: '40' },
    safe: { type: 'boolean', default: false },
    force: { type: 'boolean', default: false },
    /** Only the hostile commands whose names start with one of these (comma list): `--only 'cpu,fork'`. */
    only: { type: 'string' },
  },
});
const SECONDS = Number(values.seconds);
const QUIET_RUNS = Number(values['quiet-runs']);
const KEY = 'ao_bench_noisynoisynoisynoisy01';
const TOKEN = 'bench-noisy-internal-token-0123';
const MODEL = 'openai-compatible:fake-model';
const HERE = import.meta.dirname;
/** Each hostile command is cut off by the tool's own timeout too, whatever the limits say. */
const COMMAND_TIMEOUT_MS = 20_000;
/**
 * Tenant A's ceilings: what the runner holds A's sessions to (below the operator's defaults where it matters). A quarter
 * of a CPU per session: A's four spinners together get one of this 2-core machine's cores at most.
 */
const A_CEILINGS = { memoryMiB: 256, pids: 64, cpus: 0.25, diskMiB: 256, fileMiB: 256, wallSeconds: 15, cpuSeconds: 15, outputBytes: 16 * 1024 };

const ALL_HOSTILE: Array<[string, string]> = values.safe
  ? [
      ['fork bomb (safe: sleep)', 'sleep 2'],
      ['memory hog (safe: echo)', 'echo hog'],
      ['cpu spinner 1 (safe: sleep)', 'sleep 1'],
      ['cpu spinner 2 (safe: sleep)', 'sleep 1'],
      ['cpu spinner 3 (safe: sleep)', 'sleep 1'],
      ['cpu spinner 4 (safe: sleep)', 'sleep 1'],
      ['disk filler (safe: 1 MiB)', 'dd if=/dev/zero of=fill bs=1M count=1 2>&1; rm -f fill'],
    ]
  : [
      ['fork bomb', 'f(){ f | f & }; f; sleep 30'],
      // a 3 GiB string: 3 GiB of memory unless something stops it
      ['memory hog', "perl -e '$x = \"a\" x (3 * 1024 ** 3); print length($x)'"],
      ['cpu spinner 1', 'yes > /dev/null'],
      ['cpu spinner 2', 'yes > /dev/null'],
      ['cpu spinner 3', 'yes > /dev/null'],
      ['cpu spinner 4', 'yes > /dev/null'],
      // the file stays until the next filler of the session removes it, so the runner sees the disk full when dd fails
      ['disk filler', 'rm -f fill; dd if=/dev/zero of=fill bs=1M count=8192 2>&1'],
    ];

const ONLY = values.only?.split(',').map((n) => n.trim()).filter(Boolean);
const HOSTILE = ONLY ? ALL_HOSTILE.filter(([name]) => ONLY.some((o) => name.startsWith(o))) : ALL_HOSTILE;
if (!HOSTILE.length) throw new Error(`--only ${values.only}: no hostile command is named so (${ALL_HOSTILE.map(([n]) => n).join(', ')})`);

const dirs: string[] = [];
const tempDir = (name: string) => {
  const d = mkdtempSync(join(tmpdir(), `svc-bench-noisy-${name}-`));
  dirs.push(d);
  return d;
};
const log = (line: string) => process.stderr.write(`[noisy] ${line}\n`);
const sandboxEnv = Object.fromEntries(Object.entries(process.env).filter(([k, v]) => k.startsWith('SVC_SANDBOX') && v !== undefined)) as Record<string, string>;

const procs: Proc[] = [];
// a bench that dies on an error leaves no server behind
process.once('exit', () => procs.forEach((p) => p.child.exitCode === null && p.child.kill('SIGKILL')));
/** Starts the four processes; each is in `procs` as soon as it runs, so the caller stops what started when one fails. */
async function start(): Promise<{ url: string; runner: Proc; runnerUrl: string }> {
  const fake = await startProcess([], {}, { script: join(HERE, 'procs', 'fake-provider.ts') });
  procs.push(fake);
  const provider = { OPENAI_COMPATIBLE_BASE_URL: fake.url, OPENAI_COMPATIBLE_API_KEY: 'x' };
  const worker = await startProcess(['--role=worker'], { SVC_INTERNAL_TOKEN: TOKEN, MODE: 'general', SVC_STATE_DIR: tempDir('worker'), ...provider });
  procs.push(worker);
  const runnerUrl = `http://127.0.0.1:${await freePort()}`;
  const runner = await startProcess(['--role=runner', `--port=${new URL(runnerUrl).port}`], {
    SVC_INTERNAL_TOKEN: TOKEN,
    SVC_WORKER_URL: worker.url,
    SVC_RUNNER_PUBLIC_URL: runnerUrl,
    SVC_DATA_DIR: tempDir('runner'),
    ...sandboxEnv,
  });
  procs.push(runner);
  // its embedded PostgreSQL runs as `nobody` when this runs as root: the folder must be searchable by it
  const conductorDir = tempDir('conductor');
  chmodSync(conductorDir, 0o711);
  const conductor = await startProcess(['--role=conductor'], {
    SVC_INTERNAL_TOKEN: TOKEN,
    SVC_RUNNERS: runnerUrl,
    SVC_BOOTSTRAP_TOKEN: KEY,
    AGENT_ORC_ADMIN_TENANT: 'default',
    SVC_DATA_DIR: conductorDir,
    ...sandboxEnv,
  });
  procs.push(conductor);
  return { url: conductor.url, runner, runnerUrl };
}

async function api<T>(url: string, method: string, path: string, key: string, body?: unknown, expect = [200, 201]): Promise<T> {
  const res = await fetch(url + path, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  });
  const text = await res.text();
  if (!expect.includes(res.status)) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

interface RunRead {
  ok: boolean;
  /** POST /api/runs → first SSE event, ms. */
  firstMs: number;
  last: string;
  /** The limit_exceeded events the run carried (`memory`, `pids`, …). */
  limits: string[];
  /** How its run_command ended: `tool ok`, `tool error`, or `no tool` when the command never answered. */
  tool: string;
  sessionId: string | undefined;
}

/** One run from POST to its terminal event; never throws (a failure is a run that did not succeed). */
async function runOnce(url: string, key: string, profile: string, prompt: string, sessionId?: string): Promise<RunRead> {
  const t0 = performance.now();
  let firstMs = NaN;
  let last = 'none';
  const limits: string[] = [];
  let tool = 'no tool';
  let session: string | undefined;
  try {
    const started = await api<{ runId: string; sessionId: string }>(url, 'POST', '/api/runs', key, { profile, prompt, ...(sessionId ? { sessionId } : {}) }, [202]);
    const { runId } = started;
    session = started.sessionId;
    const res = await fetch(`${url}/api/runs/${encodeURIComponent(runId)}/stream`, { headers: { authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(120_000) });
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of res.body!) {
      buffer += decoder.decode(chunk, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = frame.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim()).join('\n');
        if (!data) continue;
        if (Number.isNaN(firstMs)) firstMs = performance.now() - t0;
        const event = JSON.parse(data) as { type: string; limit?: { limit: string }; isError?: boolean };
        last = event.type;
        if (event.type === 'limit_exceeded' && event.limit) limits.push(event.limit.limit);
        if (event.type === 'tool_result') tool = event.isError ? 'tool error' : 'tool ok';
      }
    }
  } catch (err) {
    last = `failed: ${err instanceof Error ? err.message : String(err)}`;
  }
  return { ok: last === 'result', firstMs, last, limits, tool, sessionId: session };
}

const pct = (xs: number[], p: number) => percentile([...xs].filter(Number.isFinite).sort((a, b) => a - b), p);

try {
  const { url, runner, runnerUrl } = await start();
  const info = (await (await fetch(`${runnerUrl}/runner/info`, { headers: { 'X-Svc-Internal-Token': `Bearer ${TOKEN}` } })).json()) as {
    limits?: { mode: string; enforced: Record<string, string>; missing: string[]; totalCpus?: number };
  };
  const enforced = info.limits?.enforced ?? {};
  const unheld = ['memoryMiB', 'pids', 'cpus', 'diskMiB'].filter((k) => !enforced[k] || enforced[k] === 'none');
  console.log(`noisy neighbour: tenant A (${HOSTILE.map(([n]) => n).join(', ')}) beside tenant B (ordinary runs), ${SECONDS} s`);
  console.log(`runner limits: ${info.limits ? `${info.limits.mode}; ${Object.entries(enforced).map(([k, v]) => `${k} ${v}`).join(', ')}${info.limits.totalCpus !== undefined ? `; all sandboxes together at most ${info.limits.totalCpus} CPUs` : ''}${info.limits.missing.length ? `; missing: ${info.limits.missing.join('; ')}` : ''}` : 'not reported (a runner without sandbox limits)'}`);
  if (unheld.length && !values.safe && !values.force) {
    console.log(`refusing to start: the runner does not hold ${unheld.join(', ')}; A's commands would take this host down. --safe tries the plumbing with harmless commands, --force runs them anyway.`);
    process.exitCode = 1;
  } else {
    // tenants a (noisy) and b (quiet), each with an owner key; A held to its ceilings
    const keys: Record<string, string> = {};
    for (const id of ['a', 'b']) {
      await api(url, 'POST', '/api/tenants', KEY, { id, name: `tenant ${id}` }, [201, 409]);
      keys[id] = (await api<{ token: string }>(url, 'POST', `/api/tenants/${id}/keys`, KEY, { name: `bench ${id}` })).token;
    }
    await api(url, 'PUT', '/api/tenants/a/limits', KEY, A_CEILINGS);
    await api(url, 'POST', '/api/profiles', keys.a, { name: 'noisy', runtime: 'general', model: MODEL, tools: ['@default', '@exec'] });
    await api(url, 'POST', '/api/profiles', keys.b, { name: 'quiet', runtime: 'general', model: MODEL });
    const bRun = () => runOnce(url, keys.b, 'quiet', 'hello');
    for (let i = 0; i < 5; i++) await bRun(); // warm-up

    log(`quiet: ${QUIET_RUNS} runs of tenant B alone`);
    const rssIdle = rssMiB(runner.child.pid);
    const quiet: RunRead[] = [];
    for (let i = 0; i < QUIET_RUNS; i++) quiet.push(await bRun());

    log(`noisy: tenant A's ${HOSTILE.length} commands in a loop for ${SECONDS} s, tenant B's runs beside them`);
    const watch = sampleRss(runner.child.pid, 250);
    const until = performance.now() + SECONDS * 1000;
    const outcomes = new Map<string, { runs: number; ended: Record<string, number>; limits: Record<string, number> }>();
    const loops = HOSTILE.map(async ([name, command]) => {
      const tally = { runs: 0, ended: {} as Record<string, number>, limits: {} as Record<string, number> };
      outcomes.set(name, tally);
      const prompt = `CALL_TOOL run_command ${JSON.stringify({ command, timeout_ms: COMMAND_TIMEOUT_MS })}`;
      // one session per hostile command, as an agent that keeps at it: its sandbox, disk and cgroups are made once
      let session: string | undefined;
      while (performance.now() < until) {
        const r = await runOnce(url, keys.a, 'noisy', prompt, session);
        session ??= r.sessionId;
        tally.runs++;
        const ended = `${r.tool}, ${r.last}`;
        tally.ended[ended] = (tally.ended[ended] ?? 0) + 1;
        for (const l of r.limits) tally.limits[l] = (tally.limits[l] ?? 0) + 1;
      }
    });
    const noisy: RunRead[] = [];
    while (performance.now() < until) noisy.push(await bRun());
    const rss = watch.stop();
    log("noisy: waiting for tenant A's last commands to end");
    await Promise.all(loops);

    const line = (label: string, rs: RunRead[]) => {
      const ok = rs.filter((r) => r.ok).length;
      const firsts = rs.map((r) => r.firstMs);
      return `${label.padEnd(14)} ${String(ok).padStart(4)}/${String(rs.length).padEnd(4)} ok (${fmt((100 * ok) / Math.max(1, rs.length), 1)}%)   dispatch p50 ${fmt(pct(firsts, 50), 1)} ms   p99 ${fmt(pct(firsts, 99), 1)} ms`;
    };
    console.log('');
    console.log(line('B quiet', quiet));
    console.log(line('B beside A', noisy));
    console.log(`B p99 beside A / quiet p99: ${fmt(pct(noisy.map((r) => r.firstMs), 99) / pct(quiet.map((r) => r.firstMs), 99), 2)}×`);
    const failed = noisy.filter((r) => !r.ok);
    if (failed.length) console.log(`B's failed runs ended with: ${[...new Set(failed.map((r) => r.last))].join('; ')}`);
    console.log(`runner RSS: ${fmt(rssIdle, 0)} MiB before, peak ${fmt(rss.peak, 0)} MiB beside A, ${fmt(rssMiB(runner.child.pid), 0)} MiB after`);
    console.log("tenant A's runs (how they ended; limits tripped):");
    for (const [name, t] of outcomes) {
      const ended = Object.entries(t.ended).map(([k, n]) => `${k} ${n}`).join(', ');
      const limits = Object.entries(t.limits).map(([k, n]) => `${k} ${n}`).join(', ') || 'none';
      console.log(`  ${name.padEnd(28)} ${String(t.runs).padStart(3)} runs: ${ended}; limits: ${limits}`);
    }
  }
} finally {
  for (const p of procs.reverse()) await p.stop(10_000);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
}
