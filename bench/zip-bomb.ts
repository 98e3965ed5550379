/**
 * How the server answers others while it refuses zip bombs: `/healthz` and another tenant's `GET /v1/skills` latency,
 * first on an idle server, then while one client posts bombs to `POST /v1/skills` back to back. Two bombs: "total",
 * 70 entries that each declare 100 bytes and inflate to 1 MiB at about 50:1 (1.5 MB; refused at the 64 MiB total
 * after inflating all of it), and "zeros", 4 MiB whose 1000 entries declare 100 bytes and hold 4 MiB of zeros each
 * (4 GiB; refused at the ratio after about 1 MiB). Latencies count the requests whose time overlapped a bomb in flight
 * (one blocked behind an inflating bomb counts). The bombs are posted from a worker thread, so building their multipart bodies never delays the probes.
 * Usage: npm run bench:zip-bomb [-- --seconds 10] [--bombs total,zeros]
 */
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { parseArgs } from 'node:util';
import { fmt, percentile, startProcess } from './lib.ts';
import { lyingZip } from '../test/support/zip.ts';

const KEY = 'ao_test_benchbenchbenchbench0001';
const MiB = 1024 * 1024;

if (!isMainThread) await bomber(workerData as BomberData);
else await main();

interface BomberData {
  url: string;
  bomb: Uint8Array;
  until: number;
  /** [0]: 1 while a bomb request is in flight; [1]: how many times a bomb request started or ended. */
  flag: Int32Array;
}

/** Posts the bomb back to back until `until`; reports each answer's status and time to the main thread. */
async function bomber({ url, bomb, until, flag }: BomberData): Promise<void> {
  while (Date.now() < until) {
    const form = new FormData();
    form.append('files', new Blob([new Uint8Array(bomb)]), 'bomb.zip');
    const t0 = performance.now();
    Atomics.store(flag, 0, 1);
    Atomics.add(flag, 1, 1);
    const res = await fetch(`${url}/v1/skills`, { method: 'POST', headers: { authorization: `Bearer ${KEY}` }, body: form });
    await res.arrayBuffer();
    Atomics.store(flag, 0, 0);
    Atomics.add(flag, 1, 1);
    parentPort!.postMessage({ status: res.status, ms: performance.now() - t0 });
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { seconds: { type: 'string', default: '10' }, bombs: { type: 'string', default: 'total,zeros' } } });
  const seconds = Number(values.seconds);
  const bombs = new Set(values.bombs.split(','));

  const proc = await startProcess(['--role=conductor'], { SVC_BOOTSTRAP_TOKEN: KEY, DATABASE_URL: 'memory', AGENT_ORC_ADMIN_TENANT: 'default' });
  try {
    const auth = (key: string) => ({ authorization: `Bearer ${key}` });
    const created = await fetch(`${proc.url}/api/tenants`, { method: 'POST', headers: { ...auth(KEY), 'content-type': 'application/json' }, body: JSON.stringify({ id: 'other', name: 'Other' }) });
    if (created.status !== 201) throw new Error(`creating tenant other: ${created.status}`);
    const keyRes = await fetch(`${proc.url}/api/tenants/other/keys`, { method: 'POST', headers: { ...auth(KEY), 'content-type': 'application/json' }, body: JSON.stringify({ name: 'bench' }) });
    const otherKey = ((await keyRes.json()) as { token: string }).token;

    const flag = new Int32Array(new SharedArrayBuffer(8));
    const inFlight = () => Atomics.load(flag, 0) === 1;
    /** Loops `request` sequentially until `until`, recording the latency of those that overlapped a bomb in flight (or all, with `always`). */
    async function probe(request: () => Promise<Response>, until: () => boolean, always: boolean): Promise<number[]> {
      const out: number[] = [];
      while (!until()) {
        const before = { inFlight: inFlight(), transitions: Atomics.load(flag, 1) };
        const t0 = performance.now();
        const res = await request();
        await res.arrayBuffer();
        if (res.status !== 200) throw new Error(`probe answered ${res.status}`);
        const overlapped = before.inFlight || inFlight() || Atomics.load(flag, 1) !== before.transitions;
        if (always || overlapped) out.push(performance.now() - t0);
      }
      return out;
    }
    const healthz = () => fetch(`${proc.url}/healthz`);
    const otherTenant = () => fetch(`${proc.url}/v1/skills`, { headers: auth(otherKey) });

    const summary = (label: string, ms: number[]) => {
      const s = [...ms].sort((a, b) => a - b);
      console.log(`${label.padEnd(44)} p50 ${fmt(percentile(s, 50), 2).padStart(8)} ms   p99 ${fmt(percentile(s, 99), 2).padStart(8)} ms   max ${fmt(s.at(-1) ?? NaN, 2).padStart(8)} ms   (${s.length})`);
    };

    async function phase(label: string, bomb: Uint8Array | undefined) {
      const end = Date.now() + seconds * 1000;
      const done = () => Date.now() >= end;
      const refusals: number[] = [];
      const statuses = new Map<number, number>();
      const bomber = bomb
        ? new Promise<void>((resolve, reject) => {
            const worker = new Worker(new URL(import.meta.url), { workerData: { url: proc.url, bomb, until: end, flag } satisfies BomberData });
            worker.on('message', (m: { status: number; ms: number }) => {
              refusals.push(m.ms);
              statuses.set(m.status, (statuses.get(m.status) ?? 0) + 1);
            });
            worker.on('error', reject);
            worker.on('exit', () => resolve());
          })
        : Promise.resolve();
      const [health, other] = await Promise.all([probe(healthz, done, !bomb), probe(otherTenant, done, !bomb), bomber]);
      console.log(`\n${label}${bomb ? ` (${fmt(bomb.byteLength / MiB, 1)} MiB bomb)` : ''}`);
      summary('  GET /healthz', health);
      summary("  GET /v1/skills (another tenant)", other);
      if (bomb) summary(`  POST /v1/skills bomb → ${[...statuses].map(([status, n]) => `${status}×${n}`).join(' ')}`, refusals);
    }

    console.log(`svc --role=conductor on embedded PostgreSQL; ${seconds} s per phase; one client per probe, one posting bombs`);
    for (let i = 0; i < 50; i++) await (await healthz()).arrayBuffer(); // warm-up
    await phase('idle', undefined);
    if (bombs.has('total')) await phase('bomb "total": 70 × 1 MiB at ~50:1, each declaring 100 bytes', lyingZip({ entries: 70, entryBytes: MiB }));
    if (bombs.has('zeros')) await phase('bomb "zeros": 1000 × 4 MiB of zeros, each declaring 100 bytes', lyingZip({ entries: 1000, entryBytes: 4 * MiB, data: new Uint8Array(4 * MiB) }));
  } finally {
    await proc.stop();
  }
}
