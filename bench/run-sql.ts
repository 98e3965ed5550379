/**
 * `npm run bench:run-sql`: SQL statements and transactions one run costs the database, counted by PostgreSQL itself.
 *
 *   npm run bench:run-sql [-- --runs 20] [--show]
 *
 * Starts `svc serve` (role all) on its own embedded PostgreSQL with `log_statement=all` (SVC_PG_SETTINGS; svc passes
 * the postmaster's log lines on at SVC_LOG_LEVEL=debug, into a file of the bench's temporary folder), creates a profile, warms up, then does `--runs` sequential runs
 * (POST /api/runs with the fake provider, its stream read to the terminal event), and waits until the run hooks they
 * queued are delivered. It counts the statements the svc role sent in that window, per connection: a transaction is
 * BEGIN…COMMIT/ROLLBACK, or one statement outside them. Background work that does not depend on runs (the job queue's
 * polling and maintenance, the conductor loop) is counted in a quiet window of the same length right after, and
 * subtracted; both figures are printed. `--show` prints the statements of one run, normalised and counted.
 */
import { spawn } from 'node:child_process';
import { chmodSync, closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startProcess } from './lib.ts';

const HERE = dirname(fileURLToPath(import.meta.url));
const KEY = 'ao_test_benchbenchbenchbench0001';
const AUTH = { authorization: `Bearer ${KEY}` };
const JSON_AUTH = { ...AUTH, 'content-type': 'application/json' };

const { values } = parseArgs({ options: { runs: { type: 'string', default: '20' }, show: { type: 'boolean', default: false }, prompt: { type: 'string', default: 'DELTAS 10' } } });
const RUNS = Number(values.runs);
const log = (msg: string) => process.stderr.write(`[run-sql] ${msg}\n`);

const dir = mkdtempSync(join(tmpdir(), 'svc-run-sql-'));
chmodSync(dir, 0o777); // the embedded PostgreSQL's OS user (as root) writes its log here
const logFile = join(dir, 'svc.log');
// session id | application name | message
const settings = ['log_statement=all', 'log_line_prefix=@@%c|%a|'];

const fake = await startProcess([], {}, { script: join(HERE, 'procs', 'fake-provider.ts') });
const svc = await startSvc();

/** `svc serve` with its log (JSON lines, the postmaster's among them) in `logFile`. */
async function startSvc() {
  const fd = openSync(logFile, 'a');
  const child = spawn(process.execPath, [fileURLToPath(new URL('../bin/svc.js', import.meta.url)), 'serve', '--port=0'], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      SVC_LOG_LEVEL: 'debug',
      SVC_DATA_DIR: join(dir, 'data'),
      SVC_BOOTSTRAP_TOKEN: KEY,
      SVC_PG_SETTINGS: settings.join(' '),
      OPENAI_COMPATIBLE_BASE_URL: fake.url,
      OPENAI_COMPATIBLE_API_KEY: 'x',
    },
    stdio: ['ignore', fd, fd],
  });
  closeSync(fd);
  const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`svc exited ${code}: ${readFileSync(logFile, 'utf8').slice(-2000)}`))));
  exited.catch(() => {});
  for (let i = 0; i < 600; i++) {
    const m = /listening on (http:\/\/[^\s"]+)/.exec(readFileSync(logFile, 'utf8'));
    if (m) return { url: m[1], stop: () => new Promise<void>((r) => (child.exitCode !== null ? r() : (child.once('exit', () => r()), child.kill('SIGTERM')))) };
    await Promise.race([exited, new Promise((r) => setTimeout(r, 100))]);
  }
  child.kill('SIGKILL');
  throw new Error('svc did not listen within 60 s');
}

interface Stmt {
  session: string;
  app: string;
  text: string;
}

/** Statements logged so far (a statement's continuation lines joined to it). */
function readLog(): Stmt[] {
  if (!existsSync(logFile)) return [];
  const out: Stmt[] = [];
  let cur: Stmt | undefined;
  for (const raw of readFileSync(logFile, 'utf8').split('\n')) {
    if (!raw.includes('"tag":"db"')) continue;
    let line: string;
    try {
      line = (JSON.parse(raw) as { msg: string }).msg;
    } catch {
      continue;
    }
    if (line.startsWith('@@')) {
      cur = undefined;
      const [session, app, ...rest] = line.slice(2).split('|');
      const msg = rest.join('|');
      const m = /^LOG:\s+(?:statement|execute [^:]*):\s?(.*)$/s.exec(msg);
      if (m) out.push((cur = { session, app, text: m[1] }));
    } else if (cur && line.startsWith('\t')) cur.text += '\n' + line.slice(1);
  }
  return out;
}

const isBegin = (t: string) => /^\s*(begin|start transaction)\b/i.test(t);
const isEnd = (t: string) => /^\s*(commit|rollback|end)\b/i.test(t);

/** Statements and transactions of the svc connections in `stmts`. */
function count(stmts: Stmt[]) {
  const open = new Set<string>();
  let statements = 0;
  let transactions = 0;
  let scope = 0;
  for (const s of stmts) {
    if (s.app !== 'svc') continue;
    statements++;
    if (isBegin(s.text)) {
      open.add(s.session);
      transactions++;
    } else if (isEnd(s.text)) open.delete(s.session);
    else if (!open.has(s.session)) transactions++;
    if (/^\s*(begin|commit|rollback)\b|set_config\('app\./i.test(s.text) && !/^\s*(insert|update|delete|with)\b/i.test(s.text)) scope++;
  }
  return { statements, transactions, scope };
}

const normalise = (t: string) => t.replace(/\s+/g, ' ').replace(/\$\d+/g, '$').replace(/'[^']*'/g, "'…'").trim().slice(0, 160);

async function runOnce(prompt: string): Promise<void> {
  const res = await fetch(svc.url + '/api/runs', { method: 'POST', headers: JSON_AUTH, body: JSON.stringify({ profile: 'bench', prompt }) });
  const text = await res.text();
  if (res.status !== 202) throw new Error(`POST /api/runs: ${res.status} ${text}`);
  const { runId } = JSON.parse(text) as { runId: string };
  const stream = await fetch(`${svc.url}/api/runs/${runId}/stream`, { headers: AUTH });
  const body = await stream.text();
  if (!body.includes('"type":"result"')) throw new Error(`run ${runId} did not end with a result: ${body.slice(-300)}`);
}

/** The job queue polls every 2 s: after this long, the run hooks queued by the runs are delivered. */
const SETTLE_MS = 5000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

try {
  const res = await fetch(svc.url + '/api/profiles', { method: 'POST', headers: JSON_AUTH, body: JSON.stringify({ name: 'bench', runtime: 'general', model: 'openai-compatible:fake-model' }) });
  if (res.status !== 201) throw new Error(`POST /api/profiles: ${res.status} ${await res.text()}`);
  for (let i = 0; i < 5; i++) await runOnce(values.prompt);
  await sleep(SETTLE_MS);

  const from = readLog().length;
  const t0 = performance.now();
  for (let i = 0; i < RUNS; i++) await runOnce(values.prompt);
  await sleep(SETTLE_MS);
  const window = performance.now() - t0;
  const during = readLog().slice(from);

  // a longer time with no runs: what the background (job queue polling, schedule ticks) costs per second
  const quietFrom = readLog().length;
  const quietMs = Math.max(3 * window, 15_000);
  await sleep(quietMs);
  const quiet = readLog().slice(quietFrom);
  const scale = window / quietMs;

  const d = count(during);
  const q = count(quiet);
  const per = (n: number, b: number) => ((n - b * scale) / RUNS).toFixed(1);
  console.log(`\nSQL per run: ${RUNS} sequential runs of "${values.prompt}", svc role all on its embedded PostgreSQL (log_statement=all)\n`);
  console.log(`| figure | per run | window with runs (${(window / 1000).toFixed(1)} s) | quiet window (${(quietMs / 1000).toFixed(1)} s, background) |`);
  console.log(`| --- | --- | --- | --- |`);
  console.log(`| statements | ${per(d.statements, q.statements)} | ${d.statements} | ${q.statements} |`);
  console.log(`| transactions | ${per(d.transactions, q.transactions)} | ${d.transactions} | ${q.transactions} |`);
  console.log(`| of the statements: begin / set_config(app.…) / commit | ${per(d.scope, q.scope)} | ${d.scope} | ${q.scope} |`);
  console.log(`\nper run = (window − quiet × ${scale.toFixed(2)}) / ${RUNS}; the background's share varies by about ±0.5 per run`);
  if (values.show) {
    const tally = new Map<string, number>();
    for (const s of during) if (s.app === 'svc') tally.set(normalise(s.text), (tally.get(normalise(s.text)) ?? 0) + 1);
    for (const s of quiet) if (s.app === 'svc') tally.set(normalise(s.text), (tally.get(normalise(s.text)) ?? 0) - scale);
    console.log('\nstatements per run (window minus quiet window), most frequent first:');
    for (const [t, n] of [...tally].filter(([, n]) => n / RUNS >= 0.05).sort((a, b) => b[1] - a[1])) console.log(`${(n / RUNS).toFixed(1).padStart(6)}  ${t}`);
  }
} finally {
  await svc.stop();
  await fake.stop();
  rmSync(dir, { recursive: true, force: true });
}
