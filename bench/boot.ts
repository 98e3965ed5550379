/**
 * `npm run bench:boot [-- --samples N]`: the boot of the all-in-one `svc serve` on its own PostgreSQL, from the
 * TypeScript sources (SVC_NO_BUNDLE=1) against the boot bundle (bin/bundle.js, built first when stale), samples
 * alternating. Per sample: a first boot in a new SVC_DATA_DIR and a restart on it, each timed from spawn to the first
 * /healthz 200; the CPU time (user + system, /proc/<pid>/stat) the svc process used by then, which a busy machine
 * inflates far less than wall time; the time until /readyz answers 200 as well (the job queue comes up after /healthz);
 * and its RSS right after /healthz answered and 2 s later. Medians, then the samples.
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { execFileSync } from 'node:child_process';
import { cpuMs, fmt, freePort, rssMiB, startProcess } from './lib.ts';

const { values } = parseArgs({ options: { samples: { type: 'string', default: '5' } } });
const SAMPLES = Number(values.samples);
const KEY = 'ao_bench_boot0000000000000000000000';

execFileSync(process.execPath, [new URL('../bin/bundle.js', import.meta.url).pathname, '--if-stale'], { stdio: 'inherit' });

interface Boot {
  wallMs: number;
  readyMs: number;
  cpuMs: number;
  rssMiB: number;
  rssSettledMiB: number;
}

async function boot(dataDir: string, code: 'sources' | 'bundle'): Promise<Boot> {
  const port = await freePort();
  const t0 = performance.now();
  const proc = startProcess([`--port=${port}`], { SVC_DATA_DIR: dataDir, SVC_BOOTSTRAP_TOKEN: KEY, ...(code === 'sources' ? { SVC_NO_BUNDLE: '1' } : {}) });
  proc.catch(() => {});
  let wallMs = NaN;
  let cpu = NaN;
  let rss = NaN;
  let pid: number | undefined;
  for (;;) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/healthz`);
      await res.arrayBuffer();
      if (res.status === 200) {
        wallMs = performance.now() - t0;
        pid = (await proc).child.pid;
        cpu = cpuMs(pid);
        rss = rssMiB(pid);
        break;
      }
    } catch {
      // not listening yet
    }
    if (performance.now() - t0 > 60_000) throw new Error('no /healthz 200 within 60 s');
    await new Promise((r) => setTimeout(r, 5));
  }
  let readyMs = NaN;
  while (performance.now() - t0 < 60_000) {
    const res = await fetch(`http://127.0.0.1:${port}/readyz`);
    await res.arrayBuffer();
    if (res.status === 200) {
      readyMs = performance.now() - t0;
      break;
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  await new Promise((r) => setTimeout(r, 2000));
  const rssSettledMiB = rssMiB(pid);
  await (await proc).stop();
  return { wallMs, readyMs, cpuMs: cpu, rssMiB: rss, rssSettledMiB };
}

const results: Record<string, { first: Boot[]; restart: Boot[] }> = { sources: { first: [], restart: [] }, bundle: { first: [], restart: [] } };
const dirs: string[] = [];
try {
  for (let i = 0; i < SAMPLES; i++) {
    for (const code of i % 2 ? (['bundle', 'sources'] as const) : (['sources', 'bundle'] as const)) {
      const dir = mkdtempSync(join(tmpdir(), 'svc-bench-boot-'));
      chmodSync(dir, 0o711); // as root, the embedded PostgreSQL's OS user walks through it
      dirs.push(dir);
      const first = await boot(dir, code);
      const restart = await boot(dir, code);
      results[code].first.push(first);
      results[code].restart.push(restart);
      process.stderr.write(`sample ${i + 1}/${SAMPLES} ${code}: first ${fmt(first.wallMs, 0)} ms (cpu ${fmt(first.cpuMs, 0)}), restart ${fmt(restart.wallMs, 0)} ms (cpu ${fmt(restart.cpuMs, 0)}), rss ${fmt(first.rssMiB, 0)}/${fmt(first.rssSettledMiB, 0)} MiB\n`);
    }
  }
} finally {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const cell = (code: string, kind: 'first' | 'restart', k: keyof Boot) => fmt(median(results[code][kind].map((b) => b[k])), 0);
const rows: string[][] = [
  ['figure (median of ' + SAMPLES + ')', 'sources (SVC_NO_BUNDLE=1)', 'bundle'],
  ['first boot → /healthz 200, ms', cell('sources', 'first', 'wallMs'), cell('bundle', 'first', 'wallMs')],
  ['first boot, CPU ms of the svc process by then', cell('sources', 'first', 'cpuMs'), cell('bundle', 'first', 'cpuMs')],
  ['restart → /healthz 200, ms', cell('sources', 'restart', 'wallMs'), cell('bundle', 'restart', 'wallMs')],
  ['restart, CPU ms of the svc process by then', cell('sources', 'restart', 'cpuMs'), cell('bundle', 'restart', 'cpuMs')],
  ['first boot → /readyz 200 (job queue up), ms', cell('sources', 'first', 'readyMs'), cell('bundle', 'first', 'readyMs')],
  ['restart → /readyz 200 (job queue up), ms', cell('sources', 'restart', 'readyMs'), cell('bundle', 'restart', 'readyMs')],
  ['RSS at /healthz 200 (restart), MiB', cell('sources', 'restart', 'rssMiB'), cell('bundle', 'restart', 'rssMiB')],
  ['RSS 2 s later (restart), MiB', cell('sources', 'restart', 'rssSettledMiB'), cell('bundle', 'restart', 'rssSettledMiB')],
];
console.log(`\nsvc boot, Node ${process.version}\n`);
console.log(rows.map((r, i) => `| ${r.join(' | ')} |` + (i === 0 ? `\n|${' --- |'.repeat(r.length)}` : '')).join('\n'));
console.log('\nsamples (ms):', JSON.stringify(Object.fromEntries(Object.entries(results).map(([k, v]) => [k, { first: v.first.map((b) => Math.round(b.wallMs)), restart: v.restart.map((b) => Math.round(b.wallMs)) }]))));
