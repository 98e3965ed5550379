import type { MemoryConfig } from '../../../config/config.ts';
import type { Tx } from '../../../db/index.ts';
import type { MemoryAccess, MemoryLimits } from '../../../contracts/memory.ts';
import { AppError, badRequest, notFound } from '../../../shared/errors.ts';
import type { Principal } from '../identity/index.ts';
import { getStore, runMemory, type StoreRow } from './stores.repo.ts';

/**
 * Who reaches which partition of a store. A person (API key, dashboard or JWT session) names the end user of a
 * per_user store (`userId`) and may write what their role allows. An agent's run (its run token) reaches only the
 * stores its profile mounts, with the access the mount gives, and only its own end user's partition: a run without
 * an end user has no per_user store, so anonymous callers never share one.
 */
export interface Target {
  tenantId: string;
  store: StoreRow;
  /** '' for a shared store; the end-user id for a per_user one. */
  partition: string;
  access: MemoryAccess;
  /** Recorded on the versions this caller writes: `run:<id>`, `key:<id>`, `user:<subject>`. */
  actor: string;
  /** The store's caps, each lowered to the operator's ceiling. */
  limits: MemoryLimits;
}

export const runIdOf = (p: Principal): string | undefined => (p.authKind === 'run_token' && p.subject?.startsWith('run:') ? p.subject.slice(4) : undefined);

export function actorOf(p: Principal): string {
  const run = runIdOf(p);
  if (run) return `run:${run}`;
  if (p.keyId) return `key:${p.keyId}`;
  return p.subject ? `user:${p.subject}` : p.authKind;
}

/** A store's caps as they hold now: the operator may have lowered a ceiling after the store was made. */
export function limitsOf(config: MemoryConfig, s: Pick<StoreRow, 'maxEntries' | 'maxEntryBytes' | 'maxTotalBytes'>): MemoryLimits {
  return {
    maxEntries: Math.min(s.maxEntries, config.maxEntries),
    maxEntryBytes: Math.min(s.maxEntryBytes, config.maxEntryBytes),
    maxTotalBytes: Math.min(s.maxTotalBytes, config.maxTotalBytes),
  };
}

export const noRunEndUser = (store: string) =>
  `memory store ${store} keeps a separate memory per end user, and this run has no end user (an anonymous caller, or a run started without userId), so it is not available`;

/** The partition `principal` reaches in store `name`; 404 for an unknown store, 403 for one a run may not reach. */
export async function targetOf(tx: Tx, config: MemoryConfig, principal: Principal, name: string, userId: string | undefined): Promise<Target> {
  const runId = runIdOf(principal);
  if (runId) {
    if (userId !== undefined) throw badRequest('userId: a run reaches only the memory of its own end user');
    const run = await runMemory(tx, runId);
    const mount = run?.mounts.find((m) => m.name === name);
    if (!run || !mount) {
      const names = run?.mounts.map((m) => m.name) ?? [];
      throw new AppError(403, `memory store ${name} is not mounted for this run (${names.length ? `mounted: ${names.join(', ')}` : 'its profile mounts no memory store'})`);
    }
    const store = await getStore(tx, { name });
    if (!store) throw notFound(`memory store ${name} no longer exists`);
    if (store.scope === 'per_user' && !run.endUserId) throw new AppError(403, noRunEndUser(name));
    return { tenantId: principal.tenantId, store, partition: store.scope === 'per_user' ? run.endUserId! : '', access: mount.access, actor: `run:${runId}`, limits: limitsOf(config, store) };
  }
  const store = await getStore(tx, { name });
  if (!store) throw notFound(`unknown memory store: ${name}`);
  if (store.scope === 'per_user' && !userId) throw badRequest(`userId: memory store ${name} is per_user; name the end user whose memory to reach`);
  if (store.scope === 'shared' && userId) throw badRequest(`userId: memory store ${name} is shared; it has no per-user memories`);
  return { tenantId: principal.tenantId, store, partition: userId ?? '', access: 'read_write', actor: actorOf(principal), limits: limitsOf(config, store) };
}

export function assertWritable(t: Target): void {
  if (t.access !== 'read_write') throw new AppError(403, `memory store ${t.store.name} is mounted read-only for this agent; it may view and search it, not change it`);
}
