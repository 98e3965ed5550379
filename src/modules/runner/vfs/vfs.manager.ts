import { createHash } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { PoolSpec, ProfileSpec, VfsLease } from '../../../contracts/runner.wire.ts';
import type { VfsMount } from '../../../contracts/toolkit.ts';
import { createLogger } from '../../../shared/log.ts';
import { leaseMounts, rulesFor } from './policy.ts';
import { createVfsView, type VfsView } from './vfs.view.ts';

/**
 * The runner's VirtualFS: one lease per live session, and where each mount lives on the host under `dataDir`:
 *   /home        → tenants/<tenant>/profiles/<profile>/home   (persistent per tenant and profile)
 *   /work        → sessions/<sessionId>/work                    (session scratch; removed when the session ends;
 *                  a session that shares another's sandbox (`sandboxOf`) works in that one's, and leaves it be)
 *   /pool/<pool> → tenants/<tenant>/pools/<pool>               (shared by the pool's members)
 * Directories are created on first use, so a session that never touches a file leaves nothing on disk.
 */
export interface VfsManager {
  allocate(session: VfsSession): VfsLease;
  /** Ends the lease and removes the session's scratch directory (best effort). */
  release(sessionId: string): void;
  lease(sessionId: string): VfsLease | undefined;
  /** Leases of one tenant, or of every tenant when `tenant` is undefined (internal fan-out), sorted by session id. */
  leases(tenant?: string): VfsLease[];
  /** The session's filesystem as its tools see it; `pools` are the tenant's pools (membership and patterns). */
  view(session: VfsSession, pools: readonly PoolSpec[]): VfsView;
}

export interface VfsSession {
  id: string;
  tenant: string;
  profile: ProfileSpec;
  /** The session whose `/work` this one uses (a /v1 subagent in its parent's sandbox). */
  sandboxOf?: string;
}

const log = createLogger('runner:vfs');

/** A host directory name for a tenant, profile or pool name: kept when plainly safe, otherwise a stable hash. */
export function dirName(name: string): string {
  if (/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(name) && !name.includes('..')) return name;
  return `h-${createHash('sha256').update(name).digest('hex').slice(0, 32)}`;
}

/**
 * A session's scratch folder on a disk of its own (the sandbox limits' `diskMiB`): `prepare` mounts it (once) and
 * answers where, or undefined where session disks are not enforced; `release` unmounts and discards it.
 */
export interface SessionDiskHook {
  root(): string | undefined;
  prepare(session: VfsSession): Promise<string | undefined>;
  mountOf(sessionId: string): string | undefined;
  release(sessionId: string): Promise<void>;
}

export function createVfsManager(opts: { dataDir: string; disks?: SessionDiskHook }): VfsManager {
  const byId = new Map<string, { tenant: string; lease: VfsLease; shared: boolean }>();
  const tenantDir = (tenant: string) => join(opts.dataDir, 'tenants', dirName(tenant));
  const sessionDir = (id: string) => opts.disks?.mountOf(id) ?? join(opts.dataDir, 'sessions', dirName(id));

  return {
    allocate(session) {
      const lease: VfsLease = { sessionId: session.id, allowedMounts: leaseMounts(session.profile), allocatedAt: new Date().toISOString() };
      byId.set(session.id, { tenant: session.tenant, lease, shared: session.sandboxOf !== undefined });
      return lease;
    },
    release(sessionId) {
      const entry = byId.get(sessionId);
      if (!entry || !byId.delete(sessionId) || entry.shared) return;
      if (opts.disks?.mountOf(sessionId)) {
        opts.disks.release(sessionId).catch((err) => log.warn('releasing a session disk failed', { sessionId, error: String(err) }));
        return;
      }
      rm(sessionDir(sessionId), { recursive: true, force: true }).catch((err) => log.warn('removing session scratch failed', { sessionId, error: String(err) }));
    },
    lease: (sessionId) => byId.get(sessionId)?.lease,
    leases: (tenant) =>
      [...byId.values()]
        .filter((l) => tenant === undefined || l.tenant === tenant)
        .map((l) => l.lease)
        .sort((a, b) => a.sessionId.localeCompare(b.sessionId)),
    view(session, pools) {
      const rules = rulesFor(session.profile, pools);
      const known = new Set(pools.map((p) => p.name));
      const roots = {
        '/home': () => join(tenantDir(session.tenant), 'profiles', dirName(session.profile.name), 'home'),
        '/work': () => join(sessionDir(session.sandboxOf ?? session.id), 'work'),
        '/pool': (pool: string) => (known.has(pool) ? join(tenantDir(session.tenant), 'pools', dirName(pool)) : undefined),
      } satisfies Record<VfsMount, (pool: string) => string | undefined>;
      const owner = { ...session, id: session.sandboxOf ?? session.id };
      const disks = opts.disks;
      const work = disks && { prepare: async () => void (await disks.prepare(owner)), base: () => (disks.mountOf(owner.id) ? disks.root() : undefined) };
      return createVfsView({ base: opts.dataDir, rules, roots, work });
    },
  };
}
