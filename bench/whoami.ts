/**
 * Requests/s of an authenticated `GET /api/whoami` (key lookup under RLS + tenant read), on the embedded PostgreSQL
 * (a throwaway cluster) and on the PostgreSQL server. Usage: npm run bench:whoami [-- --seconds 5 --concurrency 32]
 */
import { parseArgs } from 'node:util';
import { load, fmt, startProcess } from './lib.ts';
import { adminUrl, answers, createTestDatabase } from '../test/support/pg.ts';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '5' }, concurrency: { type: 'string', default: '32' } } });
const seconds = Number(values.seconds);
const concurrency = Number(values.concurrency);
const KEY = 'ao_test_benchbenchbenchbench0001';

async function measure(label: string, env: Record<string, string>) {
  const proc = await startProcess(['--role=conductor'], { SVC_BOOTSTRAP_TOKEN: KEY, ...env });
  try {
    const headers = { authorization: `Bearer ${KEY}` };
    const once = async () => {
      const res = await fetch(proc.url + '/api/whoami', { headers });
      if (res.status !== 200) throw new Error(String(res.status));
      await res.arrayBuffer();
    };
    for (let i = 0; i < 200; i++) await once(); // warm-up
    const r = await load(once, { concurrency, seconds });
    console.log(`${label.padEnd(22)} ${fmt(r.rps, 0).padStart(8)} req/s   p50 ${fmt(r.p50, 2)} ms   p99 ${fmt(r.p99, 2)} ms   (${r.n} requests, ${r.errors} errors)`);
    return r;
  } finally {
    await proc.stop();
  }
}

console.log(`GET /api/whoami, ${concurrency} concurrent clients, ${seconds} s each`);
const results: Record<string, unknown> = {};
results.embedded = await measure('embedded PostgreSQL', { DATABASE_URL: 'memory' });
if (await answers(adminUrl())) {
  const db = await createTestDatabase();
  try {
    results.postgres = await measure('PostgreSQL server', { DATABASE_URL: db.url });
  } finally {
    await db.drop();
  }
} else console.log('PostgreSQL server: not reachable, skipped');
