/**
 * Benchmark: instructions a `--role=worker` process executes per model delta, counted by valgrind's callgrind (a count
 * that does not depend on what else the machine is doing, unlike CPU time). The worker runs under callgrind; after
 * warm-up runs its counters are zeroed, `--runs` runs of `DELTAS <deltas>` are counted, then as many of `DELTAS 100`;
 * the difference divided by the extra deltas is the cost of one delta, without the per-run work. Slow: valgrind runs
 * the worker some 50 times slower (about 5 minutes with the defaults).
 *
 *   node_modules/.bin/node bench/worker-callgrind.ts [--runs 3] [--deltas 1000] [--warmup 2]
 */
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { readNdjson } from '../src/shared/ndjson.ts';
import { startFakeProvider } from '../test/support/fake-provider.ts';
import { runBody } from '../test/support/worker.ts';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '3' }, deltas: { type: 'string', default: '1000' }, warmup: { type: 'string', default: '2' } } });
const runs = Number(values.runs);
const deltas = Number(values.deltas);
const SMALL = 100;

const fake = await startFakeProvider();
const out = mkdtempSync(join(tmpdir(), 'svc-bench-callgrind-'));
const stateDir = mkdtempSync(join(tmpdir(), 'svc-bench-worker-'));
const bin = fileURLToPath(new URL('../bin/svc.js', import.meta.url));
const child = spawn('valgrind', ['--tool=callgrind', '--smc-check=all-non-file', `--callgrind-out-file=${out}/callgrind.%p`, process.execPath, bin, 'serve', '--port=0', '--role=worker'], {
  env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', SVC_LOG_LEVEL: 'warn', SVC_INTERNAL_TOKEN: 'bench-internal-token', MODE: 'general', SVC_STATE_DIR: stateDir, OPENAI_COMPATIBLE_BASE_URL: fake.url },
  stdio: ['ignore', 'pipe', 'pipe'],
});
let output = '';
const url = await new Promise<string>((resolve, reject) => {
  const onData = (d: Buffer) => {
    output += d;
    const m = /listening on (http:\/\/\S+)/.exec(output);
    if (m) resolve(m[1]);
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  child.once('exit', (code) => reject(new Error(`worker under valgrind exited ${code}: ${output.slice(-3000)}`)));
});

let seq = 0;
async function run(n: number): Promise<number> {
  const body = runBody(`DELTAS ${n}`, { model: 'openai-compatible:fake-model', sessionId: `sess-callgrind-${++seq}`, sessionMcpUrl: '' });
  const res = await fetch(`${url}/run`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  let events = 0;
  let last: { type?: string; message?: string } = {};
  for await (const event of readNdjson<{ type: string; message?: string }>(res.body!)) (events++, (last = event));
  if (last.type !== 'result') throw new Error(`run ended with ${last.type}: ${last.message}`);
  return events;
}

/** Runs `n`-delta runs between zeroed counters and a dump named `label`; the instructions they took. */
async function counted(label: string, n: number): Promise<{ instructions: number; eventsPerRun: number }> {
  const pid = String(child.pid);
  execFileSync('callgrind_control', ['-z', pid], { stdio: 'ignore' });
  let events = 0;
  for (let i = 0; i < runs; i++) events += await run(n);
  execFileSync('callgrind_control', ['-d', label, pid], { stdio: 'ignore' });
  let instructions = 0;
  for (const file of readdirSync(out)) {
    const text = readFileSync(join(out, file), 'utf8');
    if (!new RegExp(`^desc: Trigger: .*${label}`, 'm').test(text)) continue;
    instructions += Number((/^totals: (\d+)/m.exec(text) ?? /^summary: (\d+)/m.exec(text))?.[1] ?? 0);
  }
  return { instructions, eventsPerRun: events / runs };
}

try {
  for (let i = 0; i < Number(values.warmup); i++) await run(deltas);
  const big = await counted('big', deltas);
  const small = await counted('small', SMALL);
  const perDelta = (big.instructions - small.instructions) / (runs * (deltas - SMALL));
  console.log(`\nworker process under callgrind, ${runs} runs each, Node ${process.version}`);
  console.table([
    { runs: `DELTAS ${deltas}`, 'events/run': big.eventsPerRun, 'instructions/run (M)': (big.instructions / runs / 1e6).toFixed(1) },
    { runs: `DELTAS ${SMALL}`, 'events/run': small.eventsPerRun, 'instructions/run (M)': (small.instructions / runs / 1e6).toFixed(1) },
  ]);
  console.log(`instructions per delta: ${Math.round(perDelta).toLocaleString('en-US')} (the ${deltas - SMALL} deltas between the two)`);
} finally {
  child.removeAllListeners('exit');
  child.kill('SIGTERM');
  await fake.close();
  rmSync(out, { recursive: true, force: true });
  rmSync(stateDir, { recursive: true, force: true });
}
