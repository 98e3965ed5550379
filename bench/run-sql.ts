/**
 * `npm run bench:run-sql`: SQL statements and transactions one run costs the database, counted by PostgreSQL itself.
 *
 *   npm run bench:run-sql [-- --runs 20] [--show] [--billing]
 *
 * Starts `svc serve` (role all) on its own embedded PostgreSQL with `log_statement=all` (SVC_PG_SETTINGS; svc passes
 * the postmaster's log lines on at SVC_LOG_LEVEL=debug, into a file of the bench's temporary folder), creates a profile, warms up, then does `--runs` sequential runs
 * (POST /api/runs with the fake provider, its stream read to the terminal event), and waits until the run hooks they
 * queued are delivered. It counts the statements the svc role sent in that window, per connection: a transaction is
 * BEGIN…COMMIT/ROLLBACK, or one statement outside them. Background work that does not depend on runs (system-scope
 * transactions of the conductor loop and schedules, the job queue's own statements) is told apart by what the
 * transaction does and printed beside; a quiet window without runs after it shows the run path is then (close to)
 * nothing. `--show` prints the run-path statements of one run, normalised and counted. `--billing` runs with
 * SVC_BILLING=ledger (the tenant granted credit first): the credit gate before each run, its charge after.
 *
 * Round trips: the run-path statements that waited on an answer of their own. svc's driver (src/db/pipelined.ts)
 * writes a transaction's begin and scope with its first statement, a commit with the last statement, and a statement
 * whose answer is not read with the one after it; each of those riding along carries the PIPELINED comment in its text,
 * which PostgreSQL's log shows. A round trip is thus a logged statement without it: one per network write the caller
 * waited on (a statement sent on its own, or the last of a pipelined write). Statements of other clients (the job
 * queue's own connections) carry no such mark and count one each.
 */
import { spawn } from 'node:child_process';
import { chmodSync, closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startProcess } from './lib.ts';
import { PIPELINED } from '../src/db/pipelined.ts';

const HERE = dirname(fileURLToPath(import.meta.url));
const KEY = 'ao_test_benchbenchbenchbench0001';
const AUTH = { authorization: `Bearer ${KEY}` };
const JSON_AUTH = { ...AUTH, 'content-type': 'application/json' };

const { values } = parseArgs({ options: { runs: { type: 'string', default: '20' }, show: { type: 'boolean', default: false }, prompt: { type: 'string', default: 'DELTAS 10' }, billing: { type: 'boolean', default: false } } });
const RUNS = Number(values.runs);

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
      ...(values.billing ? { SVC_BILLING: 'ledger', AGENT_ORC_ADMIN_TENANT: 'default' } : {}),
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

type Kind = 'run' | 'system' | 'queue';

/**
 * The svc connections' statements in `stmts`, grouped into transactions (per connection: BEGIN…COMMIT/ROLLBACK, or one
 * statement outside them) and sorted by what they do: `system` (the conductor's own periodic work across tenants:
 * set_config('app.system')), `queue` (only the job queue's statements, schema pgboss: its polling and maintenance) and
 * `run` (everything else: tenant-scoped work, key lookups, a run hook's job inserted by the transaction ending a run).
 */
function transactions(stmts: Stmt[]): Array<{ kind: Kind; texts: string[] }> {
  const open = new Map<string, string[]>();
  const out: Array<{ kind: Kind; texts: string[] }> = [];
  const close = (texts: string[]) => {
    const body = texts.filter((t) => !isBegin(t) && !isEnd(t));
    const kind: Kind = body.some((t) => /set_config\('app\.system'/.test(t)) ? 'system' : body.length > 0 && body.every((t) => /pgboss\./i.test(t)) ? 'queue' : 'run';
    out.push({ kind, texts });
  };
  for (const s of stmts) {
    if (s.app !== 'svc') continue;
    const cur = open.get(s.session);
    if (cur) {
      cur.push(s.text);
      if (isEnd(s.text)) (open.delete(s.session), close(cur));
    } else if (isBegin(s.text)) open.set(s.session, [s.text]);
    else close([s.text]);
  }
  for (const texts of open.values()) close(texts);
  return out;
}

const isScope = (t: string) => isBegin(t) || isEnd(t) || /^\s*select set_config\('app\./i.test(t);

function count(stmts: Stmt[]) {
  const zero = () => ({ statements: 0, transactions: 0, scope: 0, trips: 0 });
  const tally = { run: zero(), system: zero(), queue: zero() };
  for (const t of transactions(stmts)) {
    const c = tally[t.kind];
    c.transactions++;
    c.statements += t.texts.length;
    c.scope += t.texts.filter(isScope).length;
    c.trips += t.texts.filter((x) => !x.includes(PIPELINED)).length;
  }
  return tally;
}

const normalise = (t: string) => (t.includes(PIPELINED) ? '(pipelined) ' : '') + t.replace(PIPELINED, '').replace(/\s+/g, ' ').replace(/\$\d+/g, '$').replace(/'[^']*'/g, "'…'").trim().slice(0, 160);

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
  if (values.billing) {
    const grant = await fetch(svc.url + '/api/billing/grants', { method: 'POST', headers: JSON_AUTH, body: JSON.stringify({ tenantId: 'default', amountMicroUSD: 1_000_000_000 }) });
    if (grant.status !== 201) throw new Error(`POST /api/billing/grants: ${grant.status} ${await grant.text()}`);
  }
  for (let i = 0; i < 5; i++) await runOnce(values.prompt);
  await sleep(SETTLE_MS);

  const from = readLog().length;
  const t0 = performance.now();
  for (let i = 0; i < RUNS; i++) await runOnce(values.prompt);
  await sleep(SETTLE_MS);
  const window = performance.now() - t0;
  const during = readLog().slice(from);

  // a time with no runs: the background alone, and the check that the run path is then empty
  const quietFrom = readLog().length;
  const quietMs = Math.max(window, 5000);
  await sleep(quietMs);
  const quiet = readLog().slice(quietFrom);

  const d = count(during);
  const q = count(quiet);
  const per = (n: number) => (n / RUNS).toFixed(1);
  console.log(`\nSQL per run: ${RUNS} sequential runs of "${values.prompt}", svc role all on its embedded PostgreSQL (log_statement=all)${values.billing ? ', SVC_BILLING=ledger' : ''}\n`);
  console.log(`| figure | per run | window with runs (${(window / 1000).toFixed(1)} s) | quiet window (${(quietMs / 1000).toFixed(1)} s, no runs) |`);
  console.log(`| --- | --- | --- | --- |`);
  console.log(`| statements on the run path | **${per(d.run.statements)}** | ${d.run.statements} | ${q.run.statements} |`);
  console.log(`| transactions on the run path | **${per(d.run.transactions)}** | ${d.run.transactions} | ${q.run.transactions} |`);
  console.log(`| of those statements: begin / set_config(app.…) / commit | ${per(d.run.scope)} | ${d.run.scope} | ${q.run.scope} |`);
  console.log(`| round trips on the run path (statements that waited on an answer) | **${per(d.run.trips)}** | ${d.run.trips} | ${q.run.trips} |`);
  console.log(`| background: system-scope statements (conductor loop, schedules) | – | ${d.system.statements} | ${q.system.statements} |`);
  console.log(`| background: job queue statements (polling, hooks' jobs fetched and completed) | – | ${d.queue.statements} | ${q.queue.statements} |`);
  console.log(`\nThe run path is every transaction that is neither system scope nor the job queue's alone; the quiet window shows it is`);
  console.log(`(close to) nothing without runs, so the per-run figures are deterministic. Scale of the background: per second of time.`);
  if (values.show) {
    const tally = new Map<string, number>();
    for (const t of transactions(during)) if (t.kind === 'run') for (const x of t.texts) tally.set(normalise(x), (tally.get(normalise(x)) ?? 0) + 1);
    console.log('\nrun-path statements per run, most frequent first:');
    for (const [t, n] of [...tally].filter(([, n]) => n / RUNS >= 0.05).sort((a, b) => b[1] - a[1])) console.log(`${(n / RUNS).toFixed(1).padStart(6)}  ${t}`);
  }
} finally {
  await svc.stop();
  await fake.stop();
  rmSync(dir, { recursive: true, force: true });
}
