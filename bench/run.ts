/**
 * `npm run bench`: control-plane overhead, throughput, memory and cold start of svc, each figure next to its floor
 * measured in the same run: the fake model provider called directly, and a bare Hono hello-world on
 * @hono/node-server (one HTTP hop and nothing else).
 *
 *   npm run bench [-- --quick] [--profile] [--deployments embedded,split] [--sections dispatch,throughput,…]
 *                 [--subscribers 1,50] [--svc-env 'K=V …'] [--svc-node-args '--flag …'] [--out f]
 *
 * Deployments (each a set of real `svc serve` processes on loopback):
 *   embedded  `svc serve` (role all) with DATABASE_URL unset: its own PostgreSQL (child processes) in a fresh temporary
 *             SVC_DATA_DIR; the database processes' memory and CPU are reported beside the svc process's
 *   split     `--role=conductor` on the PostgreSQL server (a fresh database), `--role=runner`, `--role=worker`
 * The fake provider runs in its own process (bench/procs/fake-provider.ts), so the benchmark client and the provider
 * do not share an event loop; so does the Hono floor (bench/procs/hello.ts). The client is this process (fetch).
 *
 * Sections (all by default): dispatch (POST /api/runs → first SSE event, sequential runs), throughput (runs/s at
 * concurrency 1/16/64 with a 10-delta reply, and CPU per run of each process), events (events/s to SSE clients with a
 * 1,000-delta reply and 1 or 50 subscribers per run; RSS is sampled under throughput and events), memory (runner RSS
 * and heap per idle session, after a full GC), coldstart (`svc serve` → /healthz 200, first boot and restart).
 * `--profile` starts the svc processes under `node --cpu-prof` (profiles in bench/results/profiles/<stamp>/<process>/,
 * summarise them with `node bench/cpuprofile.ts <dir>`); profiled figures are slower and are not kept as results.
 *
 * Output: a Markdown table on stdout (progress on stderr) and JSON in bench/results/<date>.json; quick, partial and
 * profiled runs write to bench/results/tmp/ (ignored by git). A process that does not stop within 30 s of SIGTERM is
 * killed and reported on stderr.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { adminUrl, answers, createTestDatabase } from '../test/support/pg.ts';
import { cpuMs, descendants, fmt, freePort, groupCpuMs, groupMemoryMiB, percentile, rssMiB, sampleRss, startProcess, type Proc } from './lib.ts';

const HERE = dirname(fileURLToPath(import.meta.url));
const KEY = 'ao_test_benchbenchbenchbench0001';
const INTERNAL_TOKEN = 'bench-internal-token';
const MODEL = 'openai-compatible:fake-model';
const AUTH = { authorization: `Bearer ${KEY}` };
const JSON_AUTH = { ...AUTH, 'content-type': 'application/json' };

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    profile: { type: 'boolean', default: false },
    deployments: { type: 'string', default: 'embedded,split' },
    sections: { type: 'string', default: 'dispatch,throughput,events,memory,coldstart' },
    subscribers: { type: 'string', default: '1,50' },
    'svc-env': { type: 'string', default: '' },
    'svc-node-args': { type: 'string', default: '' },
    out: { type: 'string' },
  },
});
const QUICK = values.quick;
const CFG = {
  dispatchRuns: QUICK ? 100 : 500,
  warmupRuns: QUICK ? 10 : 30,
  seconds: QUICK ? 1 : 5,
  refSeconds: QUICK ? 0.5 : 3,
  concurrency: [1, 16, 64],
  shortPrompt: 'DELTAS 10',
  longPrompt: 'DELTAS 1000',
  subscribers: values.subscribers.split(',').map(Number),
  longReps: QUICK ? 1 : 5,
  sessions: QUICK ? [1000] : [1000, 10_000],
  coldStarts: QUICK ? 1 : 3,
};
const deployments = values.deployments.split(',').map((s) => s.trim()).filter(Boolean);
const sections = new Set(values.sections.split(',').map((s) => s.trim()));
const stamp = new Date().toISOString().replace(/[:.]/g, '-').slice(0, 19);
const profileDir = values.profile ? join(HERE, 'results', 'profiles', stamp) : undefined;
const log = (msg: string) => process.stderr.write(`[bench] ${msg}\n`);

const tempDirs: string[] = [];
const tempDir = (prefix: string) => {
  const d = mkdtempSync(join(tmpdir(), `svc-bench-${prefix}-`));
  chmodSync(d, 0o711); // as root, the embedded PostgreSQL's OS user walks through it
  tempDirs.push(d);
  return d;
};
/** `--svc-node-args '--trace-gc …'` and `--svc-env 'K=V K=V'`: given to every svc process the bench starts (experiments). */
const svcNodeArgs = values['svc-node-args'].split(' ').filter(Boolean);
const svcEnv: Record<string, string> = Object.fromEntries(values['svc-env'].split(' ').filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
const nodeArgsFor = (name: string) => [...svcNodeArgs, ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${join(profileDir, name)}`] : [])];

// ---------------------------------------------------------------------------------------------------------------------
// Reading streams: a deliberately small SSE frame counter (the client must not be the bottleneck).

interface StreamRead {
  events: number;
  /** ms from `t0` to the first frame, and to the first frame carrying a streamed delta. */
  firstMs: number;
  firstDeltaMs: number;
  endMs: number;
  /** The last frame's text (its `data:` is parsed only when asked). */
  lastFrame: string;
}

interface Progress {
  events: number;
  lastFrame: string;
  done: boolean;
}

async function readFrames(res: Response, t0: number, isDelta: (frame: string) => boolean = (f) => f.includes('"delta":true'), progress?: Progress): Promise<StreamRead> {
  if (!res.ok || !res.body) throw new Error(`stream answered ${res.status}: ${await res.text()}`);
  const decoder = new TextDecoder();
  let buffer = '';
  let events = 0;
  let firstMs = NaN;
  let firstDeltaMs = NaN;
  let lastFrame = '';
  for await (const chunk of res.body) {
    buffer += decoder.decode(chunk, { stream: true });
    let start = 0;
    let end: number;
    while ((end = buffer.indexOf('\n\n', start)) >= 0) {
      const frame = buffer.slice(start, end);
      start = end + 2;
      if (frame.startsWith(':')) continue; // keep-alive comment
      if (events++ === 0) firstMs = performance.now() - t0;
      if (Number.isNaN(firstDeltaMs) && isDelta(frame)) firstDeltaMs = performance.now() - t0;
      lastFrame = frame;
    }
    buffer = buffer.slice(start);
    if (progress) (progress.events = events), (progress.lastFrame = lastFrame);
  }
  if (progress) progress.done = true;
  return { events, firstMs, firstDeltaMs, endMs: performance.now() - t0, lastFrame };
}

const frameType = (frame: string) => /"type":"([a-z_]+)"/.exec(frame)?.[1];

// ---------------------------------------------------------------------------------------------------------------------
// Load shapes.

interface Latencies {
  n: number;
  p50: number;
  p95: number;
  p99: number;
}
function latencies(xs: number[]): Latencies {
  const s = xs.filter(Number.isFinite).sort((a, b) => a - b);
  return { n: s.length, p50: percentile(s, 50), p95: percentile(s, 95), p99: percentile(s, 99) };
}
const median = (xs: number[]) => latencies(xs).p50;

/** `concurrency` loops of `once` for `seconds`; completions per second of wall time (tails included). */
async function closedLoop(once: () => Promise<void>, concurrency: number, seconds: number) {
  const t0 = performance.now();
  const until = t0 + seconds * 1000;
  const times: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < until) {
        const t = performance.now();
        try {
          await once();
          times.push(performance.now() - t);
        } catch (err) {
          errors++;
          firstError ??= String(err);
        }
      }
    }),
  );
  const elapsed = (performance.now() - t0) / 1000;
  if (firstError) log(`  ${errors} errors, first: ${firstError.slice(0, 300)}`);
  return { concurrency, perSecond: times.length / elapsed, completed: times.length, errors, latency: latencies(times) };
}

// ---------------------------------------------------------------------------------------------------------------------
// The references: fake provider direct, Hono hello-world.

const chatBody = (prompt: string) =>
  JSON.stringify({ model: 'fake-model', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: prompt }] });

function fakeClient(fakeUrl: string) {
  return async (prompt: string): Promise<StreamRead> => {
    const t0 = performance.now();
    const res = await fetch(`${fakeUrl}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: chatBody(prompt) });
    return readFrames(res, t0, (f) => f.includes('"content":"d'));
  };
}

async function measureReferences(fake: Proc, hello: Proc) {
  const fakeOnce = fakeClient(fake.url);
  const helloGet = async () => {
    const res = await fetch(hello.url + '/');
    if (res.status !== 200) throw new Error(`hello ${res.status}`);
    await res.arrayBuffer();
  };
  const helloSse = async (n: number) => readFrames(await fetch(`${hello.url}/sse?n=${n}`), 0);
  const out: any = { fake: {}, hello: {} };

  out.hello.rssIdleMiB = rssMiB(hello.child.pid);
  out.fake.rssIdleMiB = rssMiB(fake.child.pid);
  const helloRss = sampleRss(hello.child.pid);
  const fakeRss = sampleRss(fake.child.pid);
  for (let i = 0; i < CFG.warmupRuns; i++) (await fakeOnce(CFG.shortPrompt), await helloGet());
  if (sections.has('dispatch')) {
    log('references: dispatch (time to first chunk / request latency)');
    const ttfc: number[] = [];
    const hop: number[] = [];
    for (let i = 0; i < CFG.dispatchRuns; i++) {
      ttfc.push((await fakeOnce(CFG.shortPrompt)).firstMs);
      const t = performance.now();
      await helloGet();
      hop.push(performance.now() - t);
    }
    out.fake.ttfc = latencies(ttfc);
    out.hello.request = latencies(hop);
  }
  if (sections.has('throughput')) {
    log('references: throughput');
    out.fake.throughput = [];
    out.hello.throughput = [];
    for (const c of CFG.concurrency) {
      out.fake.throughput.push(await closedLoop(async () => void (await fakeOnce(CFG.shortPrompt)), c, CFG.refSeconds));
      out.hello.throughput.push(await closedLoop(helloGet, c, CFG.refSeconds));
    }
  }
  if (sections.has('events')) await referenceEvents(out, fakeOnce, helloSse);
  out.hello.rssUnderLoad = helloRss.stop();
  out.fake.rssUnderLoad = fakeRss.stop();
  return out;
}

async function referenceEvents(out: any, fakeOnce: (prompt: string) => Promise<StreamRead>, helloSse: (n: number) => Promise<StreamRead>) {
  log('references: events/s (1,000 frames, 1 and 50 concurrent readers)');
  out.fake.events = {};
  out.hello.events = {};
  for (const subs of CFG.subscribers) {
    const fakeRates: number[] = [];
    const helloRates: number[] = [];
    for (let r = 0; r < CFG.longReps + 1; r++) {
      let t0 = performance.now();
      const f = await Promise.all(Array.from({ length: subs }, () => fakeOnce(CFG.longPrompt)));
      const fr = f.reduce((a, s) => a + s.events, 0) / ((performance.now() - t0) / 1000);
      t0 = performance.now();
      const h = await Promise.all(Array.from({ length: subs }, () => helloSse(1000)));
      const hr = h.reduce((a, s) => a + s.events, 0) / ((performance.now() - t0) / 1000);
      if (r === 0) continue; // warm-up
      fakeRates.push(fr);
      helloRates.push(hr);
    }
    out.fake.events[subs] = { eventsPerSecond: median(fakeRates) };
    out.hello.events[subs] = { eventsPerSecond: median(helloRates) };
  }
}

// ---------------------------------------------------------------------------------------------------------------------
// Deployments.

interface Deployment {
  name: string;
  url: string;
  /** The process that serves /api (the all-in-one process in `embedded`). */
  conductor: Proc;
  others: Record<string, Proc>;
  stop(): Promise<void>;
}

const providerEnv = (fakeUrl: string) => ({ OPENAI_COMPATIBLE_BASE_URL: fakeUrl, OPENAI_COMPATIBLE_API_KEY: 'x' });

async function startEmbedded(fakeUrl: string): Promise<Deployment> {
  const proc = await startProcess([], { SVC_DATA_DIR: tempDir('embedded'), SVC_BOOTSTRAP_TOKEN: KEY, ...providerEnv(fakeUrl), ...svcEnv }, { nodeArgs: nodeArgsFor('embedded-all') });
  return { name: 'embedded', url: proc.url, conductor: proc, others: {}, stop: () => proc.stop() };
}

async function startSplit(fakeUrl: string, databaseUrl: string): Promise<Deployment> {
  const started: Array<[string, Proc]> = [];
  const stop = async () => {
    for (const [name, p] of started.reverse()) {
      const t = performance.now();
      await p.stop();
      const ms = performance.now() - t;
      if (ms > 2000) log(`split: the ${name} took ${fmt(ms / 1000)} s to stop`);
    }
  };
  try {
    const worker = await startProcess(['--role=worker'], { SVC_INTERNAL_TOKEN: INTERNAL_TOKEN, MODE: 'general', SVC_STATE_DIR: tempDir('worker'), ...providerEnv(fakeUrl), ...svcEnv }, { nodeArgs: nodeArgsFor('split-worker') });
    started.push(['worker', worker]);
    const runnerUrl = `http://127.0.0.1:${await freePort()}`;
    const runner = await startProcess(
      ['--role=runner', `--port=${new URL(runnerUrl).port}`],
      { SVC_INTERNAL_TOKEN: INTERNAL_TOKEN, SVC_WORKER_URL: worker.url, SVC_RUNNER_PUBLIC_URL: runnerUrl, SVC_DATA_DIR: tempDir('runner'), ...svcEnv },
      { nodeArgs: nodeArgsFor('split-runner') },
    );
    started.push(['runner', runner]);
    const conductor = await startProcess(
      ['--role=conductor'],
      { SVC_INTERNAL_TOKEN: INTERNAL_TOKEN, DATABASE_URL: databaseUrl, SVC_RUNNERS: runnerUrl, SVC_BOOTSTRAP_TOKEN: KEY, SVC_DATA_DIR: tempDir('conductor'), ...svcEnv },
      { nodeArgs: nodeArgsFor('split-conductor') },
    );
    started.push(['conductor', conductor]);
    return { name: 'split', url: conductor.url, conductor, others: { runner, worker }, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

async function createProfile(url: string): Promise<void> {
  const res = await fetch(url + '/api/profiles', { method: 'POST', headers: JSON_AUTH, body: JSON.stringify({ name: 'bench', runtime: 'general', model: MODEL }) });
  if (res.status !== 201) throw new Error(`POST /api/profiles: ${res.status} ${await res.text()}`);
}

async function startRun(url: string, prompt: string): Promise<string> {
  const res = await fetch(url + '/api/runs', { method: 'POST', headers: JSON_AUTH, body: JSON.stringify({ profile: 'bench', prompt }), signal: AbortSignal.timeout(60_000) });
  const text = await res.text();
  if (res.status !== 202) throw new Error(`POST /api/runs: ${res.status} ${text}`);
  return (JSON.parse(text) as { runId: string }).runId;
}

/** A stream that has not ended after this long is a bug (or a hopelessly overloaded machine): fail, do not hang. */
const STREAM_TIMEOUT_MS = 120_000;
const openStream = (url: string, runId: string) =>
  fetch(`${url}/api/runs/${encodeURIComponent(runId)}/stream`, { headers: AUTH, signal: AbortSignal.timeout(STREAM_TIMEOUT_MS) }).catch((err) => {
    throw new Error(`stream of ${runId}: ${err}`);
  });

/** One run from POST to its terminal event, timed from before the POST. */
async function runOnce(url: string, prompt: string): Promise<StreamRead> {
  const t0 = performance.now();
  const runId = await startRun(url, prompt);
  const read = await readFrames(await openStream(url, runId), t0);
  const last = frameType(read.lastFrame);
  if (last !== 'result') throw new Error(`run ${runId} ended with ${last}: ${read.lastFrame.slice(0, 300)}`);
  return read;
}

async function measureDeployment(d: Deployment) {
  const procs: Array<[string, Proc]> = [['conductor', d.conductor], ...Object.entries(d.others)];
  const out: any = { processes: Object.fromEntries(procs.map(([k, p]) => [k, { pid: p.child.pid, rssIdleMiB: rssMiB(p.child.pid) }])) };
  // The embedded deployment's database: the processes `svc serve` started (watchdog, postmaster, backends).
  const dbPids = () => (d.name === 'embedded' ? descendants(d.conductor.child.pid) : []);
  if (d.name === 'embedded') out.database = { idleMiB: groupMemoryMiB(dbPids()) };
  await createProfile(d.url);
  log(`${d.name}: warm-up (${CFG.warmupRuns} runs)`);
  for (let i = 0; i < CFG.warmupRuns; i++) await runOnce(d.url, CFG.shortPrompt);

  if (sections.has('dispatch')) {
    log(`${d.name}: dispatch (${CFG.dispatchRuns} sequential runs of "${CFG.shortPrompt}")`);
    const reads: StreamRead[] = [];
    for (let i = 0; i < CFG.dispatchRuns; i++) reads.push(await runOnce(d.url, CFG.shortPrompt));
    out.dispatch = {
      firstEvent: latencies(reads.map((r) => r.firstMs)),
      firstDelta: latencies(reads.map((r) => r.firstDeltaMs)),
      complete: latencies(reads.map((r) => r.endMs)),
      eventsPerRun: reads[0].events,
    };
  }

  const watch = sections.has('throughput') || sections.has('events') ? procs.map(([k, p]) => [k, sampleRss(p.child.pid)] as const) : undefined;
  const dbPeak = { rss: 0, pss: 0 };
  const dbWatch = d.name === 'embedded' && watch ? setInterval(() => {
    const m = groupMemoryMiB(dbPids());
    dbPeak.rss = Math.max(dbPeak.rss, m.rss);
    dbPeak.pss = Math.max(dbPeak.pss, m.pss);
  }, 250) : undefined;
  if (sections.has('throughput')) {
    out.throughput = [];
    for (const c of CFG.concurrency) {
      log(`${d.name}: throughput, concurrency ${c}, ${CFG.seconds} s`);
      const cpu0 = procs.map(([, p]) => cpuMs(p.child.pid));
      const db0 = groupCpuMs(dbPids());
      const r: any = await closedLoop(async () => void (await runOnce(d.url, CFG.shortPrompt)), c, CFG.seconds);
      // CPU per completed run, by process: what a run costs, even on a machine busy with other work
      r.cpuMsPerRun = Object.fromEntries(procs.map(([k, p], i) => [k, (cpuMs(p.child.pid) - cpu0[i]) / Math.max(1, r.completed)]));
      if (d.name === 'embedded') r.databaseCpuMsPerRun = (groupCpuMs(dbPids()) - db0) / Math.max(1, r.completed);
      out.throughput.push(r);
    }
  }
  if (sections.has('events')) {
    out.events = {};
    for (const subs of CFG.subscribers) {
      log(`${d.name}: events/s, "${CFG.longPrompt}", ${subs} subscriber(s), ${CFG.longReps} runs`);
      const rates: number[] = [];
      const perSub: number[] = [];
      const phases: Array<{ firstMs: number; firstDeltaMs: number; endMs: number }> = [];
      let eventsPerRun = NaN;
      let cpu0: number[] = [];
      let db0 = 0;
      for (let r = 0; r < CFG.longReps + 1; r++) {
        if (r === 1) (cpu0 = procs.map(([, p]) => cpuMs(p.child.pid))), (db0 = groupCpuMs(dbPids()));
        const t0 = performance.now();
        const runId = await startRun(d.url, CFG.longPrompt);
        const progress: Progress[] = Array.from({ length: subs }, () => ({ events: 0, lastFrame: '', done: false }));
        // a stream that stalls is reported while it stalls (and fails after STREAM_TIMEOUT_MS)
        const watchdog = setInterval(() => {
          const open = progress.filter((p) => !p.done);
          log(`  ${d.name}: run ${runId} still streaming after ${fmt((performance.now() - t0) / 1000, 0)} s: ${open.length}/${subs} subscribers open, events ${open.map((p) => p.events).join(',')}; last: ${open[0]?.lastFrame.slice(0, 160)}`);
        }, 10_000);
        const reads = await Promise.all(progress.map(async (p) => readFrames(await openStream(d.url, runId), t0, undefined, p))).finally(() => clearInterval(watchdog));
        const ms = performance.now() - t0;
        const bad = reads.find((x) => frameType(x.lastFrame) !== 'result');
        if (bad) throw new Error(`${d.name}: a subscriber saw ${bad.lastFrame.slice(0, 200)}`);
        if (r === 0) continue; // warm-up
        const total = reads.reduce((a, x) => a + x.events, 0);
        eventsPerRun = reads[0].events;
        rates.push(total / (ms / 1000));
        perSub.push(reads[0].events / (ms / 1000));
        phases.push({ firstMs: reads[0].firstMs, firstDeltaMs: reads[0].firstDeltaMs, endMs: reads[0].endMs });
      }
      // where a run's time goes: POST → first event (dispatch), → first delta (the model call), → the last event
      const phasesMs = { firstEvent: median(phases.map((p) => p.firstMs)), firstDelta: median(phases.map((p) => p.firstDeltaMs)), end: median(phases.map((p) => p.endMs)) };
      // CPU per 1,000-delta run by process: what the event path costs, even on a machine busy with other work
      const cpuMsPerRun: Record<string, number> = Object.fromEntries(procs.map(([k, p], i) => [k, (cpuMs(p.child.pid) - cpu0[i]) / CFG.longReps]));
      if (d.name === 'embedded') cpuMsPerRun.database = (groupCpuMs(dbPids()) - db0) / CFG.longReps;
      log(`  ${d.name}: ${subs} subscriber(s): first event ${fmt(phasesMs.firstEvent)} ms, first delta ${fmt(phasesMs.firstDelta)} ms, last event ${fmt(phasesMs.end)} ms (medians); CPU ms per run ${Object.entries(cpuMsPerRun).map(([k, v]) => `${k} ${fmt(v, 0)}`).join(', ')}`);
      // the worker joins the deltas of one event-loop turn, so a run has fewer events than the model's deltas: the
      // deltas carried per second (to every subscriber) are the figure to hold against the fake's frames per second
      const deltasPerRun = Number(/DELTAS (\d+)/.exec(CFG.longPrompt)?.[1] ?? NaN);
      const deltasPerSecond = median(rates.map((rate) => (rate / eventsPerRun) * deltasPerRun));
      out.events[subs] = { eventsPerSecond: median(rates), deltasPerSecond, perSubscriber: median(perSub), eventsPerRun, phasesMs, cpuMsPerRun };
    }
  }
  if (watch) out.rssUnderLoadMiB = Object.fromEntries(watch.map(([k, w]) => [k, w.stop()]));
  if (dbWatch) {
    clearInterval(dbWatch);
    out.database.peakUnderLoadMiB = dbPeak;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------------
// Memory: runner RSS per idle session, on a runner process of its own.

/** Full GC in a process started with GC_PRELOAD, then its memory: RSS (VmRSS) and V8 heap used, in MiB. */
async function memoryAfterGc(proc: Proc): Promise<{ rssMiB: number; heapUsedMiB: number }> {
  const from = proc.output().length;
  proc.child.kill('SIGUSR2');
  for (let i = 0; i < 200; i++) {
    await new Promise((r) => setTimeout(r, 10));
    const m = /bench-memory (\{.*\})/.exec(proc.output().slice(from));
    if (m) {
      const usage = JSON.parse(m[1]) as { heapUsed: number };
      await new Promise((r) => setTimeout(r, 200)); // let the freed pages go back before reading VmRSS
      return { rssMiB: rssMiB(proc.child.pid), heapUsedMiB: usage.heapUsed / 2 ** 20 };
    }
  }
  throw new Error('no memory report after SIGUSR2');
}
const GC_PRELOAD = ['--expose-gc', `--import=${join(HERE, 'procs', 'gc-on-signal.ts')}`];

async function measureSessions(workerUrl: string) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const runner = await startProcess(
    ['--role=runner', `--port=${port}`],
    { SVC_INTERNAL_TOKEN: INTERNAL_TOKEN, SVC_WORKER_URL: workerUrl, SVC_RUNNER_PUBLIC_URL: url, SVC_DATA_DIR: tempDir('mem-runner') },
    { nodeArgs: GC_PRELOAD },
  );
  const headers = { 'X-Svc-Internal-Token': `Bearer ${INTERNAL_TOKEN}`, 'X-Svc-Tenant': 'default', 'content-type': 'application/json' };
  try {
    const res = await fetch(url + '/runner/profiles', { method: 'POST', headers, body: JSON.stringify({ profile: { name: 'bench', runtime: 'general', model: MODEL } }) });
    if (!res.ok) throw new Error(`POST /runner/profiles: ${res.status} ${await res.text()}`);
    await res.arrayBuffer();
    // warm the session route first, so the baseline already holds the code and caches every later request uses
    const create = async () => {
      const r = await fetch(url + '/runner/sessions', { method: 'POST', headers, body: JSON.stringify({ profileName: 'bench' }) });
      if (r.status !== 201) throw new Error(`POST /runner/sessions: ${r.status} ${await r.text()}`);
      await r.arrayBuffer();
    };
    for (let i = 0; i < 50; i++) await create();
    let created = 50;
    const baseline = await memoryAfterGc(runner);
    const points: Array<{ sessions: number; rssMiB: number; heapUsedMiB: number; rssPerSessionKiB: number; heapPerSessionKiB: number; createPerSecond: number }> = [];
    for (const target of CFG.sessions) {
      const t0 = performance.now();
      const before = created;
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          while (created < target + 50) {
            created++;
            await create();
          }
        }),
      );
      const rate = (created - before) / ((performance.now() - t0) / 1000);
      const m = await memoryAfterGc(runner);
      points.push({
        sessions: target,
        rssMiB: m.rssMiB,
        heapUsedMiB: m.heapUsedMiB,
        rssPerSessionKiB: ((m.rssMiB - baseline.rssMiB) * 1024) / target,
        heapPerSessionKiB: ((m.heapUsedMiB - baseline.heapUsedMiB) * 1024) / target,
        createPerSecond: rate,
      });
      log(`memory: ${target} idle sessions, runner RSS ${fmt(m.rssMiB)} MiB, heap ${fmt(m.heapUsedMiB)} MiB (baseline ${fmt(baseline.rssMiB)} / ${fmt(baseline.heapUsedMiB)} MiB)`);
    }
    return { baselineMiB: baseline.rssMiB, baselineHeapMiB: baseline.heapUsedMiB, points };
  } finally {
    await runner.stop();
  }
}

// ---------------------------------------------------------------------------------------------------------------------
// Cold start: spawn → GET /healthz answers 200.

async function timeToHealthy(args: string[], env: Record<string, string>, script?: string): Promise<number> {
  const port = await freePort();
  const t0 = performance.now();
  const proc = startProcess([...(script ? [] : [`--port=${port}`]), ...args], { ...env, PORT: String(port) }, { script });
  proc.catch(() => {});
  try {
    for (;;) {
      try {
        const res = await fetch(`http://127.0.0.1:${port}/healthz`);
        await res.arrayBuffer();
        if (res.status === 200) return performance.now() - t0;
      } catch {
        // not listening yet
      }
      if (performance.now() - t0 > 60_000) throw new Error('no /healthz 200 within 60 s');
      await new Promise((r) => setTimeout(r, 5));
    }
  } finally {
    await (await proc).stop();
  }
}

async function measureColdStart(fakeUrl: string, withServer: boolean) {
  const env = { SVC_BOOTSTRAP_TOKEN: KEY, ...providerEnv(fakeUrl) };
  const out: Record<string, number[]> = { hello: [], embeddedFresh: [], embeddedFirst: [], embeddedRestart: [], serverFirst: [], serverRestart: [] };
  for (let i = 0; i < CFG.coldStarts; i++) {
    out.hello.push(await timeToHealthy([], {}, join(HERE, 'procs', 'hello.ts')));
    // A machine that never ran svc: no template cluster in the temporary folder yet, so initdb runs first.
    out.embeddedFresh.push(await timeToHealthy([], { ...env, SVC_DATA_DIR: tempDir('cold-fresh'), TMPDIR: tempDir('tmp') }));
    const dir = tempDir('cold');
    out.embeddedFirst.push(await timeToHealthy([], { ...env, SVC_DATA_DIR: dir }));
    out.embeddedRestart.push(await timeToHealthy([], { ...env, SVC_DATA_DIR: dir }));
    if (withServer) {
      const db = await createTestDatabase();
      try {
        const dataDir = tempDir('cold-pg');
        out.serverFirst.push(await timeToHealthy([], { ...env, SVC_DATA_DIR: dataDir, DATABASE_URL: db.url }));
        out.serverRestart.push(await timeToHealthy([], { ...env, SVC_DATA_DIR: dataDir, DATABASE_URL: db.url }));
      } finally {
        await db.drop();
      }
    }
    log(`cold start ${i + 1}/${CFG.coldStarts}: ${Object.entries(out).map(([k, v]) => `${k} ${fmt(v.at(-1) ?? NaN, 0)} ms`).join(', ')}`);
  }
  return Object.fromEntries(Object.entries(out).map(([k, v]) => [k, { medianMs: median(v), samplesMs: v }]));
}

// ---------------------------------------------------------------------------------------------------------------------
// Report.

const ms = (l: Latencies | undefined) => (l ? `${fmt(l.p50)} / ${fmt(l.p95)} / ${fmt(l.p99)}` : '–');
const diff = (a: Latencies | undefined, b: Latencies | undefined) => (a && b ? `${fmt(a.p50 - b.p50)} / ${fmt(a.p95 - b.p95)} / ${fmt(a.p99 - b.p99)}` : '–');
const num = (n: number | undefined, digits = 0) => (n === undefined || !Number.isFinite(n) ? '–' : Math.round(n * 10 ** digits) / 10 ** digits).toLocaleString('en-US');

function table(results: any): string {
  const E = results.deployments.embedded;
  const S = results.deployments.split;
  const F = results.references?.fake;
  const H = results.references?.hello;
  const rows: string[][] = [];
  const row = (...cells: string[]) => rows.push(cells);
  row('figure', 'embedded (all, own PostgreSQL)', 'split (PostgreSQL server)', 'fake provider direct', 'Hono hello-world');
  if (sections.has('dispatch')) {
    row(`POST /api/runs → first SSE event, ms p50 / p95 / p99 (${CFG.dispatchRuns} runs)`, ms(E?.dispatch?.firstEvent), ms(S?.dispatch?.firstEvent), `${ms(F?.ttfc)} (first chunk)`, `${ms(H?.request)} (GET /)`);
    row('**dispatch overhead**: first SSE event − fake first chunk, ms', diff(E?.dispatch?.firstEvent, F?.ttfc), diff(S?.dispatch?.firstEvent, F?.ttfc), '0', '–');
    row('POST /api/runs → first assistant delta, ms', ms(E?.dispatch?.firstDelta), ms(S?.dispatch?.firstDelta), ms(F?.ttfc), '–');
    row('first delta − fake first chunk, ms', diff(E?.dispatch?.firstDelta, F?.ttfc), diff(S?.dispatch?.firstDelta, F?.ttfc), '0', '–');
    row('POST /api/runs → terminal event (10 deltas), ms', ms(E?.dispatch?.complete), ms(S?.dispatch?.complete), '–', '–');
  }
  if (sections.has('throughput')) {
    CFG.concurrency.forEach((c, i) =>
      row(
        `runs/s completed, concurrency ${c} (10 deltas)`,
        num(E?.throughput?.[i]?.perSecond, 1),
        num(S?.throughput?.[i]?.perSecond, 1),
        `${num(F?.throughput?.[i]?.perSecond)} streams/s`,
        `${num(H?.throughput?.[i]?.perSecond)} req/s`,
      ),
    );
    const cpu = (x: any) => (x ? Object.values(x).map((v) => fmt(v as number, 1)).join(' / ') : '–');
    const dbCpu = E?.throughput?.[1]?.databaseCpuMsPerRun;
    row(
      'CPU ms per run at concurrency 16 (conductor / runner / worker)',
      `${cpu(E?.throughput?.[1]?.cpuMsPerRun)} (svc) + ${fmt(dbCpu, 1)} (its PostgreSQL)`,
      `${cpu(S?.throughput?.[1]?.cpuMsPerRun)} (server not counted)`,
      '–',
      '–',
    );
  }
  if (sections.has('events')) {
    for (const subs of CFG.subscribers) {
      row(
        `events/s to SSE clients, 1,000 deltas, ${subs} subscriber${subs > 1 ? 's' : ''}/run`,
        num(E?.events?.[subs]?.eventsPerSecond),
        num(S?.events?.[subs]?.eventsPerSecond),
        `${num(F?.events?.[subs]?.eventsPerSecond)} (${subs} stream${subs > 1 ? 's' : ''})`,
        `${num(H?.events?.[subs]?.eventsPerSecond)} (${subs} stream${subs > 1 ? 's' : ''})`,
      );
      row(`model deltas/s to SSE clients, ${subs} subscriber${subs > 1 ? 's' : ''}/run`, num(E?.events?.[subs]?.deltasPerSecond), num(S?.events?.[subs]?.deltasPerSecond), '–', '–');
    }
  }
  if (sections.has('throughput') || sections.has('events')) {
    const peak = (x: any) => (x ? `${fmt(x.peak, 0)} (end ${fmt(x.last, 0)})` : '–');
    const idle = (x: any) => fmt(x?.rssIdleMiB, 0);
    const db = (m: any) => (m ? `${fmt(m.rss, 0)} RSS / ${fmt(m.pss, 0)} PSS` : '–');
    row('RSS idle after boot, MiB (conductor / runner / worker)', `${idle(E?.processes?.conductor)} (svc) + ${db(E?.database?.idleMiB)} (its PostgreSQL, ${E?.database?.idleMiB?.count ?? '–'} processes)`, `${idle(S?.processes?.conductor)} / ${idle(S?.processes?.runner)} / ${idle(S?.processes?.worker)}`, fmt(F?.rssIdleMiB, 0), fmt(H?.rssIdleMiB, 0));
    row('conductor RSS peak under the load above, MiB', `${peak(E?.rssUnderLoadMiB?.conductor)} (svc)`, peak(S?.rssUnderLoadMiB?.conductor), peak(F?.rssUnderLoad), peak(H?.rssUnderLoad));
    row('runner / worker RSS peak under that load, MiB', `its PostgreSQL: ${db(E?.database?.peakUnderLoadMiB)}`, `${fmt(S?.rssUnderLoadMiB?.runner?.peak, 0)} / ${fmt(S?.rssUnderLoadMiB?.worker?.peak, 0)}`, '–', '–');
  }
  if (results.memory) {
    for (const p of results.memory.points) {
      row(
        `runner memory per idle session at ${num(p.sessions)} sessions, KiB: RSS / V8 heap (after a full GC)`,
        '–',
        `${fmt(p.rssPerSessionKiB, 1)} / ${fmt(p.heapPerSessionKiB, 1)} (RSS ${fmt(p.rssMiB, 0)} MiB from ${fmt(results.memory.baselineMiB, 0)})`,
        '–',
        '–',
      );
    }
  }
  if (results.coldStart) {
    const c = results.coldStart;
    row('cold start `svc serve` → /healthz 200, first boot, ms (median)', `${fmt(c.embeddedFirst.medianMs, 0)} (${fmt(c.embeddedFresh.medianMs, 0)} on a machine without the template)`, fmt(c.serverFirst.medianMs, 0), '–', fmt(c.hello.medianMs, 0));
    row('cold start, restart on existing data, ms (median)', fmt(c.embeddedRestart.medianMs, 0), fmt(c.serverRestart.medianMs, 0), '–', fmt(c.hello.medianMs, 0));
  }
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(rows[0]), line(rows[0].map(() => '---')), ...rows.slice(1).map(line)].join('\n');
}

// ---------------------------------------------------------------------------------------------------------------------

const started = performance.now();
// svc as `npm start` runs it: from the boot bundle, built first when stale; SVC_NO_BUNDLE=1 measures the sources
const BUNDLE_JS: string = join(HERE, '..', 'bin', 'bundle.js');
if (process.env.SVC_NO_BUNDLE !== '1') execFileSync(process.execPath, [BUNDLE_JS, '--if-stale'], { stdio: 'inherit' });
const code = process.env.SVC_NO_BUNDLE === '1' ? 'sources (SVC_NO_BUNDLE=1)' : ((await import(BUNDLE_JS)) as { freshBundle(): string | undefined }).freshBundle() ? 'boot bundle' : 'sources (no fresh bundle)';
const results: any = {
  date: new Date().toISOString(),
  node: process.version,
  cpus: cpus().length,
  cpuModel: cpus()[0]?.model,
  memoryGiB: Math.round(totalmem() / 2 ** 30),
  quick: QUICK,
  code,
  profiled: Boolean(profileDir),
  config: CFG,
  notes:
    'Client: this process (fetch). Fake provider and Hono floor: own processes. Dispatch overhead = percentile of (POST → first SSE event) minus the same percentile of the fake provider\'s time to first chunk for the same prompt; the first SSE event is session_init, emitted before the worker calls the model, so "first delta" is given too. Every run creates a new session. Events/s are frames delivered across all subscribers per second of wall time from the POST to the last subscriber\'s end.',
  deployments: {},
};
const fake = await startProcess([], {}, { script: join(HERE, 'procs', 'fake-provider.ts') });
const hello = await startProcess([], {}, { script: join(HERE, 'procs', 'hello.ts') });
const haveServer = await answers(adminUrl());
try {
  if (sections.has('dispatch') || sections.has('throughput') || sections.has('events')) results.references = await measureReferences(fake, hello);
  if (sections.has('dispatch') || sections.has('throughput') || sections.has('events')) {
    for (const name of deployments) {
      if (name === 'split' && !haveServer) {
        log('split: the PostgreSQL server is not reachable, skipped');
        continue;
      }
      const db = name === 'split' ? await createTestDatabase() : undefined;
      log(`${name}: starting`);
      const d = name === 'embedded' ? await startEmbedded(fake.url) : await startSplit(fake.url, db!.url);
      try {
        results.deployments[name] = await measureDeployment(d);
      } finally {
        await d.stop();
        await db?.drop();
      }
    }
  }
  if (sections.has('memory')) {
    log('memory: idle sessions on a runner of its own');
    results.memory = await measureSessions('http://127.0.0.1:1');
  }
  if (sections.has('coldstart')) results.coldStart = await measureColdStart(fake.url, haveServer);
} finally {
  await fake.stop();
  await hello.stop();
  for (const d of tempDirs) rmSync(d, { recursive: true, force: true });
}
results.durationSeconds = Math.round((performance.now() - started) / 1000);

const md = table(results);
const temp = QUICK || profileDir || values.deployments !== 'embedded,split' || values.sections !== 'dispatch,throughput,events,memory,coldstart' || values.subscribers !== '1,50' || svcNodeArgs.length > 0 || Object.keys(svcEnv).length > 0;
const outFile = values.out ?? join(HERE, 'results', ...(temp ? ['tmp', `${stamp}.json`] : [`${results.date.slice(0, 10)}.json`]));
mkdirSync(dirname(outFile), { recursive: true });
writeFileSync(outFile, JSON.stringify({ ...results, table: md }, null, 2) + '\n');
console.log(`\nsvc benchmarks, ${results.date.slice(0, 10)}, Node ${process.version}, ${results.cpus} × ${results.cpuModel}, ${results.memoryGiB} GiB, svc from its ${results.code}${QUICK ? ' (quick)' : ''}${profileDir ? ' (under --cpu-prof)' : ''}\n`);
console.log(md);
console.log(`\n${results.durationSeconds} s; JSON: ${outFile}${profileDir ? `\nCPU profiles: ${profileDir} (node bench/cpuprofile.ts ${profileDir}/<process>)` : ''}`);
