import { afterEach, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { openDatabase } from '../../src/db/index.ts';
import { isRunning, processTree, uidOf, waitForNoProcesses } from '../support/proc-table.ts';
import { runSvc, startSvcProcess, waitForOutput, type SvcProcess } from '../support/process.ts';

/**
 * `svc serve` on its embedded PostgreSQL, as real processes: the cluster under SVC_DATA_DIR/pg, its processes never
 * root, its data kept across SIGKILLs of either svc or the postmaster, and nothing left running after a stop.
 */
const KEY = 'ao_test_embeddedembeddedembedded01';
const auth = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
// As root (CI, containers, this machine) PostgreSQL runs as `nobody`; as anyone else, as that user.
const expectedUid = process.getuid!() === 0 ? Number(execFileSync('id', ['-u', 'nobody'], { encoding: 'utf8' })) : process.getuid!();

const postmasterOf = (dataDir: string) => Number(readFileSync(join(dataDir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]);
const watchdogsOf = (svc: SvcProcess) => processTree(svc.child.pid!).filter((p) => p.command.includes('svc-pg-watchdog'));

async function createProfile(p: SvcProcess, name: string): Promise<void> {
  const res = await fetch(p.url + '/api/profiles', { method: 'POST', headers: auth, body: JSON.stringify({ name, runtime: 'general', model: 'demo:echo' }) });
  expect(res.status).toBe(201);
}
async function profileNames(p: SvcProcess): Promise<string[]> {
  const res = await fetch(p.url + '/api/profiles', { headers: auth });
  expect(res.status).toBe(200);
  return ((await res.json()) as Array<{ name: string }>).map((x) => x.name);
}

// Each test starts real svc processes (two, for the restarts) and waits for PostgreSQL's crash recovery: a loaded
// machine needs more than the suite's default limit.
const SLOW = 120_000;

describe('svc serve on its embedded PostgreSQL', { timeout: SLOW }, () => {
  const started: SvcProcess[] = [];
  const dirs: string[] = [];
  const dataDir = () => {
    const d = mkdtempSync(join(tmpdir(), 'svc-embedded-'));
    chmodSync(d, 0o711); // the cluster's OS user walks through it to <d>/pg
    dirs.push(d);
    return d;
  };
  const start = async (dir: string, env: Record<string, string> = {}) => {
    const p = await startSvcProcess([], { SVC_DATA_DIR: dir, SVC_BOOTSTRAP_TOKEN: KEY, ...env });
    started.push(p);
    return p;
  };
  afterEach(async () => {
    for (const p of started.splice(0)) await p.stop('SIGTERM');
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('runs PostgreSQL as an unprivileged OS user, hands out its URL, and leaves no postgres process after SIGTERM', async () => {
    const dir = dataDir();
    const svc = await start(dir, { SVC_PG_SETTINGS: 'max_connections=23' });
    await createProfile(svc, 'kept');

    const postmaster = postmasterOf(dir);
    const tree = processTree(postmaster);
    expect(tree.length).toBeGreaterThan(3); // postmaster, checkpointer, walwriter, backends, …
    expect(tree.map((p) => uidOf(p.pid))).toEqual(tree.map(() => expectedUid));
    expect(expectedUid).not.toBe(0);

    const url = await runSvc(['db', 'url'], { SVC_DATA_DIR: dir });
    expect(url).toMatchObject({ code: 0, stderr: '' });
    const superuserUrl = await runSvc(['db', 'url', '--superuser'], { SVC_DATA_DIR: dir });
    const app = await openDatabase({ url: url.stdout.trim(), dataDir: '/nonexistent' });
    const admin = await openDatabase({ url: superuserUrl.stdout.trim(), dataDir: '/nonexistent' });
    try {
      const role = await sql<{ rolname: string; rolsuper: boolean; rolbypassrls: boolean }>`select rolname, rolsuper, rolbypassrls from pg_roles where rolname = current_user`.execute(app.db);
      expect(role.rows).toEqual([{ rolname: 'svc_app', rolsuper: false, rolbypassrls: false }]);
      // Row-level security is forced: the app role sees no profile outside a tenant transaction, the superuser does.
      expect((await sql`select name from profiles`.execute(app.db)).rows).toEqual([]);
      expect((await sql`select name from profiles`.execute(admin.db)).rows).toEqual([{ name: 'kept' }]);
      expect((await sql`show max_connections`.execute(admin.db)).rows).toEqual([{ max_connections: '23' }]);
    } finally {
      await app.close();
      await admin.close();
    }

    expect(await svc.stop('SIGTERM')).toBe(0);
    expect(tree.filter((p) => isRunning(p.pid))).toEqual([]);
    expect(existsSync(join(dir, 'pg', 'postmaster.pid'))).toBe(false);
    const stopped = await runSvc(['db', 'url'], { SVC_DATA_DIR: dir });
    expect(stopped.stderr).toMatch(/is not running; it runs while `svc serve` does/);
  });

  it('keeps its data when the server is killed with SIGKILL, and the next start serves it', async () => {
    const dir = dataDir();
    const first = await start(dir);
    await createProfile(first, 'before-kill');
    await first.stop('SIGKILL');
    // Started at once: the watchdog of the killed server may still be shutting its PostgreSQL down.
    const second = await start(dir);
    expect(await profileNames(second)).toEqual(['before-kill']);
  });

  it('stops an orphaned postmaster (server and watchdog killed together) and starts on the same data', async () => {
    const dir = dataDir();
    const first = await start(dir);
    await createProfile(first, 'orphaned');
    const postmaster = postmasterOf(dir);
    // Frozen first, so it cannot notice its watchdog die and stop the postmaster itself, as it would when alive.
    process.kill(first.child.pid!, 'SIGSTOP');
    for (const w of watchdogsOf(first)) process.kill(w.pid, 'SIGKILL');
    await first.stop('SIGKILL');
    expect(isRunning(postmaster)).toBe(true); // nobody left to stop it

    const second = await start(dir);
    expect(second.output()).toMatch(/stopping an orphaned embedded PostgreSQL/);
    expect(isRunning(postmaster)).toBe(false);
    expect(await profileNames(second)).toEqual(['orphaned']);
  });

  it('flushes a new cluster to disk before it serves, and makes it again when a first boot ended before that', async () => {
    const dir = dataDir();
    let svc = await start(dir);
    expect(existsSync(join(dir, 'pg', '.svc-unflushed'))).toBe(false); // on disk by the time it answers
    await createProfile(svc, 'unflushed');
    await svc.stop('SIGTERM');
    // as if the machine had gone down during the first boot, before the copy of the template reached the disk
    writeFileSync(join(dir, 'pg', '.svc-unflushed'), '');
    svc = await start(dir);
    expect(await profileNames(svc)).not.toContain('unflushed');
    expect(existsSync(join(dir, 'pg', '.svc-unflushed'))).toBe(false);
  });

  it('restarts PostgreSQL when its postmaster is killed with SIGKILL under a running server', async () => {
    const dir = dataDir();
    const svc = await start(dir);
    await createProfile(svc, 'survives');
    process.kill(postmasterOf(dir), 'SIGKILL');
    await waitForOutput(svc, /embedded PostgreSQL restarted/, SLOW - 10_000);
    expect(await profileNames(svc)).toEqual(['survives']);
  });

  it('answers every request while its postmaster is killed under load, 503 with Retry-After while PostgreSQL restarts, and lives on', async () => {
    const dir = dataDir();
    const svc = await start(dir);
    await createProfile(svc, 'kept');
    // 8 clients read and write in a loop; each request must be answered (a hung one fails on its timeout, a process
    // that died fails the next fetch)
    const statuses = new Map<number, number>();
    const unavailable: Array<{ retryAfter: string | null; error: string }> = [];
    let restarted = false;
    let stop = false;
    const client = async (c: number) => {
      let after = 0;
      for (let i = 0; !stop; i++) {
        const write = i % 4 === 0;
        const res = await fetch(svc.url + '/api/profiles', {
          method: write ? 'POST' : 'GET',
          headers: auth,
          body: write ? JSON.stringify({ name: `c${c}-${i}`, runtime: 'general', model: 'demo:echo' }) : undefined,
          signal: AbortSignal.timeout(20_000),
        });
        const body = (await res.json()) as { error?: string };
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        if (res.status === 503) unavailable.push({ retryAfter: res.headers.get('retry-after'), error: body.error ?? '' });
        if (restarted && res.ok && ++after >= 5) return;
      }
    };
    const clients = Array.from({ length: 8 }, (_, c) => client(c));
    await expect.poll(() => [...statuses.values()].reduce((a, b) => a + b, 0)).toBeGreaterThan(40);
    process.kill(postmasterOf(dir), 'SIGKILL');
    await waitForOutput(svc, /embedded PostgreSQL restarted/, SLOW - 30_000);
    restarted = true;
    try {
      await Promise.all(clients);
    } finally {
      stop = true;
    }
    expect([...statuses.keys()].filter((s) => s !== 200 && s !== 201 && s !== 503)).toEqual([]);
    for (const u of unavailable) expect(u).toEqual({ retryAfter: '1', error: expect.stringMatching(/^database unavailable/) });
    expect(svc.child.exitCode).toBeNull();
    expect(svc.output()).not.toMatch(/TypeError|unhandled error/);
    expect(await profileNames(svc)).toContain('kept');
  });
});

describe('throwaway clusters (DATABASE_URL=memory)', () => {
  const throwawayOf = (svc: SvcProcess) => /-D (\S+)\/data/.exec(watchdogsOf(svc)[0]?.command ?? '')?.[1];

  it.each(['SIGTERM', 'SIGKILL'] as const)('leave no folder and no postgres process behind when the server gets %s', async (signal) => {
    const svc = await startSvcProcess(['--role=conductor'], { DATABASE_URL: 'memory', SVC_BOOTSTRAP_TOKEN: KEY });
    const root = throwawayOf(svc);
    try {
      expect(root).toMatch(/svc-pg-mem-/);
      expect(existsSync(join(root!, 'data', 'PG_VERSION'))).toBe(true);
      await createProfile(svc, 'gone');
    } finally {
      await svc.stop(signal);
    }
    // After SIGKILL the watchdog notices on its own: wait for it, bounded.
    expect(await waitForNoProcesses(root!)).toEqual([]);
    expect(existsSync(root!)).toBe(false);
  });
});
