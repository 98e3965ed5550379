import { execFileSync, spawn } from 'node:child_process';
import { chownSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { SetupError } from '../../shared/errors.ts';

/**
 * The OS user the embedded PostgreSQL runs as. PostgreSQL refuses to run as root, and a database holding every
 * tenant's rows should not run with root's rights anyway: as root (CI, containers) svc starts it as an unprivileged
 * user, `nobody` unless SVC_PG_OS_USER names another, and gives only the cluster's folder to that user. As any other
 * user, it runs as that user (`uid` undefined: no switch).
 */
export interface OsUser {
  name: string;
  uid: number | undefined;
  gid: number | undefined;
}

const users = new Map<string, OsUser>();

export function clusterUser(configured: string): OsUser {
  if (process.getuid?.() !== 0) return { name: 'self', uid: undefined, gid: undefined };
  let user = users.get(configured);
  if (!user) {
    const ids = fromPasswd(configured) ?? fromId(configured);
    if (!ids) throw new Error(`embedded PostgreSQL: svc runs as root and PostgreSQL must not; OS user "${configured}" (SVC_PG_OS_USER) does not exist`);
    if (!(ids.uid > 0)) throw new Error(`embedded PostgreSQL: SVC_PG_OS_USER "${configured}" is root; name an unprivileged user`);
    user = { name: configured, ...ids };
    users.set(configured, user);
  }
  return user;
}

/** The user's ids from /etc/passwd: read at every boot as root, where running `id` costs a process. */
function fromPasswd(name: string): { uid: number; gid: number } | undefined {
  try {
    const line = readFileSync('/etc/passwd', 'utf8').split('\n').find((l) => l.startsWith(`${name}:`));
    const [, , uid, gid] = line?.split(':') ?? [];
    return uid && gid && /^\d+$/.test(uid) && /^\d+$/.test(gid) ? { uid: Number(uid), gid: Number(gid) } : undefined;
  } catch {
    return undefined;
  }
}

/** Users only the name service knows (LDAP, systemd's dynamic users): `id` asks it. */
function fromId(name: string): { uid: number; gid: number } | undefined {
  try {
    const ids = execFileSync('id', [name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    return { uid: Number(/uid=(\d+)/.exec(ids)?.[1]), gid: Number(/gid=(\d+)/.exec(ids)?.[1]) };
  } catch {
    return undefined;
  }
}

/**
 * As root, the cluster user must be able to walk down to the cluster's folder and to the binaries; a data folder
 * under /root (mode 0700) is the usual trap. Checked from the folder's parents' modes, because root's own access
 * check would always pass.
 */
export function assertReachable(user: OsUser, path: string, what: string, elsewhere = 'choose another place'): void {
  const blocked = blockedAt(user, path);
  if (blocked) throw new SetupError(`embedded PostgreSQL runs as OS user "${user.name}", which cannot reach ${what} ${path}: ${blocked} is not searchable by it (${elsewhere}, or chmod o+x ${blocked})`);
}

export function canReach(user: OsUser, path: string): boolean {
  return blockedAt(user, path) === undefined;
}

function blockedAt(user: OsUser, path: string): string | undefined {
  if (user.uid === undefined) return undefined;
  for (let dir = dirname(path); ; dir = dirname(dir)) {
    const st = statSync(dir);
    const bit = st.uid === user.uid ? 0o100 : st.gid === user.gid ? 0o010 : 0o001;
    if (!(st.mode & bit)) return dir;
    if (dir === dirname(dir)) return undefined;
  }
}

/** Runs a short command (initdb, cp, single-user postgres) as the cluster user; rejects with its output on failure. */
export function runAs(user: OsUser, command: string, args: string[], input?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { uid: user.uid, gid: user.gid, env: childEnv(), stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout!.on('data', (d) => (out += d));
    child.stderr!.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (code === 0) resolve(out);
      else reject(new Error(`${basename(command)} failed (${signal ?? `exit ${code}`}): ${out.trim().slice(-2000)}`));
    });
    if (child.stdin) {
      // A command that exits before reading its input closes the pipe (EPIPE); its exit status, reported above, is the outcome.
      child.stdin.on('error', () => {});
      child.stdin.end(input);
    }
  });
}

/** PostgreSQL's children get a minimal environment: C messages (svc reads its log), no PG* variables of the caller. */
export function childEnv(): Record<string, string> {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C', TZ: 'UTC' };
}

/** Gives a folder svc created to the cluster user (as root); a no-op otherwise. */
export function handOver(user: OsUser, path: string): void {
  if (user.uid !== undefined) chownSync(path, user.uid, user.gid!);
}
