/**
 * Webhook delivery (issue 39): an all-in-one server on its own PostgreSQL, one endpoint on a receiver in this process,
 * `--events` test events posted by `--concurrency` clients (POST /api/webhooks/{id}/test: each writes an event and
 * its delivery in one transaction). Prints events delivered per second (first post to last arrival) and the delay from
 * each event's `createdAt` to its arrival, p50/p99. Usage: npm run bench:webhooks [-- --events 1000 --concurrency 16]
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { fmt, percentile, startProcess } from './lib.ts';

const { values } = parseArgs({ options: { events: { type: 'string', default: '1000' }, concurrency: { type: 'string', default: '16' } } });
const total = Number(values.events);
const concurrency = Number(values.concurrency);
const KEY = 'ao_test_benchbenchbenchbench0001';
const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };

const delays: number[] = [];
let lastArrival = 0;
let done: () => void;
const allArrived = new Promise<void>((r) => (done = r));
const seen = new Set<string>();
const receiver = createServer((req, res) => {
  let body = '';
  req.on('data', (d) => (body += d));
  req.on('end', () => {
    const now = Date.now();
    res.writeHead(204).end();
    const id = String(req.headers['webhook-id']);
    if (seen.has(id)) return;
    seen.add(id);
    delays.push(now - Date.parse(JSON.parse(body).createdAt));
    lastArrival = now;
    if (seen.size === total) done();
  });
});
await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/bench`;

const dir = mkdtempSync(join(tmpdir(), 'svc-bench-webhooks-'));
chmodSync(dir, 0o711); // as root, the embedded PostgreSQL's OS user walks through it
const svc = await startProcess([], { SVC_BOOTSTRAP_TOKEN: KEY, SVC_DATA_DIR: dir, SVC_LOG_LEVEL: 'warn' });
try {
  const made = await fetch(`${svc.url}/api/webhooks`, { method: 'POST', headers, body: JSON.stringify({ url: receiverUrl, events: ['webhook.test'] }) });
  if (made.status !== 201) throw new Error(`creating the endpoint: ${made.status} ${await made.text()}`);
  const { id } = (await made.json()) as { id: string };
  // warm-up: the queue's workers, the connection pools
  for (let i = 0; i < 5; i++) await fetch(`${svc.url}/api/webhooks/${id}/test`, { method: 'POST', headers });
  while (seen.size < 5) await new Promise((r) => setTimeout(r, 50));
  seen.clear();
  delays.length = 0;

  const started = Date.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        next++;
        const res = await fetch(`${svc.url}/api/webhooks/${id}/test`, { method: 'POST', headers });
        if (res.status !== 202) throw new Error(`test event: ${res.status} ${await res.text()}`);
        await res.arrayBuffer();
      }
    }),
  );
  const posted = Date.now();
  await allArrived;
  const sorted = [...delays].sort((a, b) => a - b);
  console.log(`webhooks: ${total} events, ${concurrency} clients posting, one endpoint on 127.0.0.1 (all-in-one, embedded PostgreSQL)`);
  console.log(`  posted in ${fmt((posted - started) / 1000, 2)} s (${fmt(total / ((posted - started) / 1000))} events/s written)`);
  console.log(`  delivered: ${fmt(total / ((lastArrival - started) / 1000))} events/s (first post to last arrival, ${fmt((lastArrival - started) / 1000, 2)} s)`);
  console.log(`  event → delivery: p50 ${fmt(percentile(sorted, 50), 0)} / p99 ${fmt(percentile(sorted, 99), 0)} / max ${fmt(sorted.at(-1) ?? NaN, 0)} ms`);
} finally {
  await svc.stop();
  receiver.closeAllConnections();
  receiver.close();
  rmSync(dir, { recursive: true, force: true });
}
