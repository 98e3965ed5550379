/**
 * Benchmark: RunEvents per second through the agent-worker and through runner → worker, next to the fake provider
 * called directly (raw SSE chunks per second through fetch), with the fake streaming `DELTAS <n>` (default 1,000) as
 * fast as it can. Legs, each timed from before the request to the end of its stream:
 *
 *   fake provider direct             the fake's SSE, read by this process
 *   worker (in this process)         `createWorker` on a port of this process: POST /run, NDJSON
 *   worker process                   `svc serve --role=worker`: POST /run, NDJSON (no session toolkit: sessionMcpUrl '')
 *   runner → worker processes        `svc serve --role=runner` in front of that worker: POST /runner/run, NDJSON. The
 *                                    runner creates a session per run and its worker connects to the session's MCP
 *                                    toolkit on the runner (what a real run does), so this leg includes that handshake.
 *
 * The fake provider runs in this process (as the client does); the svc legs run in their own processes.
 *
 *   node_modules/.bin/node bench/worker-events.ts [--iterations 20] [--deltas 1000] [--provider openai-compatible]
 *                                                 [--warmup 3] [--skip-processes] [--via <url>]
 *
 * `--via <url>` adds a leg that posts the same worker run body to `<url>` (a worker elsewhere) and counts its NDJSON
 * events. `--skip-processes` leaves out the two process legs.
 */
import { parseArgs } from 'node:util';
import { createParser } from 'eventsource-parser';
import { configureLogging } from '../src/shared/log.ts';
import { readNdjson } from '../src/shared/ndjson.ts';
import { startFakeProvider, type FakeProvider } from '../test/support/fake-provider.ts';
import { startTestWorker, runBody } from '../test/support/worker.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startProcess, type Proc } from './lib.ts';

const INTERNAL_TOKEN = 'bench-internal-token';
const RUNNER_HEADERS = { 'content-type': 'application/json', 'X-Svc-Internal-Token': `Bearer ${INTERNAL_TOKEN}`, 'X-Svc-Tenant': 'default' };

interface Sample {
  events: number;
  ms: number;
  firstMs: number;
}
interface Leg {
  name: string;
  unit: string;
  once(): Promise<Sample>;
}

const WIRES: Record<string, { path: string; env: (url: string) => Record<string, string>; body: (prompt: string) => unknown }> = {
  'openai-compatible': {
    path: '/chat/completions',
    env: (url) => ({ OPENAI_COMPATIBLE_BASE_URL: url }),
    body: (prompt) => ({ model: 'fake-model', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: prompt }] }),
  },
  openai: {
    path: '/responses',
    env: (url) => ({ OPENAI_API_KEY: 'sk-bench', OPENAI_BASE_URL: url }),
    body: (prompt) => ({ model: 'fake-model', stream: true, input: [{ role: 'user', content: [{ type: 'input_text', text: prompt }] }] }),
  },
  anthropic: {
    path: '/messages',
    env: (url) => ({ ANTHROPIC_API_KEY: 'sk-bench', ANTHROPIC_BASE_URL: url }),
    body: (prompt) => ({ model: 'fake-model', stream: true, max_tokens: 4096, messages: [{ role: 'user', content: prompt }] }),
  },
};

function fakeLeg(fake: FakeProvider, wire: (typeof WIRES)[string], prompt: string): Leg {
  return {
    name: 'fake provider direct',
    unit: 'SSE chunks',
    async once() {
      const t0 = performance.now();
      const res = await fetch(fake.url + wire.path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(wire.body(prompt)) });
      let events = 0;
      let firstMs = 0;
      const parser = createParser({ onEvent: () => (events++ === 0 ? (firstMs = performance.now() - t0) : 0) });
      const decoder = new TextDecoder();
      for await (const chunk of res.body!) parser.feed(decoder.decode(chunk, { stream: true }));
      return { events, ms: performance.now() - t0, firstMs };
    },
  };
}

function workerLeg(name: string, runUrl: string, body: () => unknown, headers: Record<string, string> = { 'content-type': 'application/json' }): Leg {
  return {
    name,
    unit: 'RunEvents',
    async once() {
      const t0 = performance.now();
      const res = await fetch(runUrl, { method: 'POST', headers, body: JSON.stringify(body()) });
      if (!res.ok || !res.body) throw new Error(`${name}: HTTP ${res.status} ${await res.text()}`);
      let events = 0;
      let firstMs = 0;
      let last: { type?: string; message?: string } = {};
      for await (const event of readNdjson<{ type: string; message?: string }>(res.body)) {
        if (events++ === 0) firstMs = performance.now() - t0;
        last = event;
      }
      if (last.type !== 'result') throw new Error(`${name}: run ended with ${last.type}: ${last.message}`);
      return { events, ms: performance.now() - t0, firstMs };
    },
  };
}

const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))];

async function measure(leg: Leg, iterations: number, warmup: number) {
  for (let i = 0; i < warmup; i++) await leg.once();
  const samples: Sample[] = [];
  for (let i = 0; i < iterations; i++) samples.push(await leg.once());
  const rates = samples.map((s) => s.events / (s.ms / 1000));
  return {
    leg: leg.name,
    unit: leg.unit,
    'events/run': samples[0].events,
    'median ms': quantile(samples.map((s) => s.ms), 0.5).toFixed(1),
    'p95 ms': quantile(samples.map((s) => s.ms), 0.95).toFixed(1),
    'first event ms': quantile(samples.map((s) => s.firstMs), 0.5).toFixed(1),
    'events/s (median)': Math.round(quantile(rates, 0.5)).toLocaleString('en-US'),
  };
}

const { values } = parseArgs({
  options: {
    iterations: { type: 'string', default: '20' },
    deltas: { type: 'string', default: '1000' },
    provider: { type: 'string', default: 'openai-compatible' },
    via: { type: 'string' },
    warmup: { type: 'string', default: '3' },
    'skip-processes': { type: 'boolean', default: false },
  },
});
const wire = WIRES[values.provider];
if (!wire) throw new Error(`--provider: one of ${Object.keys(WIRES).join(', ')}`);
const iterations = Number(values.iterations);
const prompt = `DELTAS ${Number(values.deltas)}`;

configureLogging({ level: 'warn' });
const fake = await startFakeProvider();
const worker = await startTestWorker({ providerEnv: wire.env(fake.url) });
let seq = 0;
// A fresh session per run: the benchmark measures streaming, not a growing history.
const body = () => runBody(prompt, { model: `${values.provider}:fake-model`, sessionId: `sess-bench-${++seq}`, sessionMcpUrl: '' });

const legs: Leg[] = [fakeLeg(fake, wire, prompt), workerLeg('worker (in this process)', `${worker.url}/run`, body)];
if (values.via) legs.push(workerLeg(`via ${values.via}`, values.via, body));

const procs: Proc[] = [];
const dirs: string[] = [];
const tempDir = (prefix: string) => {
  const d = mkdtempSync(join(tmpdir(), `svc-bench-${prefix}-`));
  dirs.push(d);
  return d;
};
if (!values['skip-processes']) {
  const workerProc = await startProcess(['--role=worker'], { SVC_INTERNAL_TOKEN: INTERNAL_TOKEN, MODE: 'general', SVC_STATE_DIR: tempDir('worker'), ...wire.env(fake.url) });
  procs.push(workerProc);
  const port = await freePort();
  const runnerUrl = `http://127.0.0.1:${port}`;
  const runner = await startProcess(['--role=runner', `--port=${port}`], {
    SVC_INTERNAL_TOKEN: INTERNAL_TOKEN,
    SVC_WORKER_URL: workerProc.url,
    SVC_RUNNER_PUBLIC_URL: runnerUrl,
    SVC_DATA_DIR: tempDir('runner'),
  });
  procs.push(runner);
  const put = await fetch(`${runnerUrl}/runner/profiles`, {
    method: 'POST',
    headers: RUNNER_HEADERS,
    body: JSON.stringify({ profile: { name: 'bench', runtime: 'general', model: `${values.provider}:fake-model` } }),
  });
  if (!put.ok) throw new Error(`POST /runner/profiles: ${put.status} ${await put.text()}`);
  legs.push(workerLeg('worker process POST /run', `${workerProc.url}/run`, body));
  // no sessionId: the runner creates a fresh session for every run, as the conductor does for a new conversation
  legs.push(workerLeg('runner → worker processes', `${runnerUrl}/runner/run`, () => ({ subTask: { id: `run-bench-${++seq}`, profile: 'bench', title: 'bench', prompt } }), RUNNER_HEADERS));
}

try {
  const rows = [];
  for (const leg of legs) {
    rows.push(await measure(leg, iterations, Number(values.warmup)));
    fake.requests.length = 0; // the log would otherwise grow with every request
  }
  console.log(`\n${prompt} over the ${values.provider} wire, ${iterations} iterations (+${values.warmup} warm-up), Node ${process.version}\n`);
  console.table(rows);
} finally {
  for (const p of procs.reverse()) await p.stop();
  await worker.close();
  await fake.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
}
