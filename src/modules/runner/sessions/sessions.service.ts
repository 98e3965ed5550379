import type { ProfileSpec } from '../../../contracts/runner.wire.ts';
import { newSessionId } from '../../../shared/ids.ts';
import { notFound } from '../../../shared/errors.ts';
import type { Registry } from '../registry/registry.store.ts';
import type { RunnerMetrics } from '../runner.metrics.ts';
import type { WorkerSlots } from '../workers/worker-slots.ts';
import type { SandboxWorkers } from '../workers/sandbox/sandbox-workers.ts';
import type { SessionRecord, SessionStore } from './sessions.store.ts';

/** Session rules shared by the session, state and run routes: profile lookup, creation and the health verdict. */
export interface SessionsDeps {
  sessions: SessionStore;
  profiles: Registry<ProfileSpec>;
  slots: WorkerSlots;
  /** Workers of `workerMode: "sandbox"` sessions, one per session on a substrate. */
  sandboxWorkers: SandboxWorkers;
  metrics: RunnerMetrics;
  hash: string;
}

/** Health checks wait this long for the worker; a caller asking "is it healthy?" wants a quick answer. */
const HEALTH_PROBE_TIMEOUT_MS = 2_000;

export function requireProfile(deps: Pick<SessionsDeps, 'profiles'>, tenant: string, name: string): ProfileSpec {
  const profile = deps.profiles.get(tenant, name);
  if (!profile) throw notFound(`unknown profile: ${name}`);
  return profile;
}

export function createSession(deps: SessionsDeps, tenant: string, profileName: string, sandboxOf?: string): SessionRecord {
  const profile = requireProfile(deps, tenant, profileName);
  const rec = deps.sessions.create(tenant, newSessionId(deps.hash), profile, '', sandboxOwner(deps, tenant, sandboxOf));
  deps.metrics.sessionCreated();
  return rec;
}

/**
 * The session whose sandbox a new session shares: a live session of the tenant on this runner (404 otherwise); one
 * that itself shares another's names that one, so every sharer points at the owner of the files.
 */
export function sandboxOwner(deps: Pick<SessionsDeps, 'sessions'>, tenant: string, sandboxOf: string | undefined): string | undefined {
  if (!sandboxOf) return undefined;
  const owner = deps.sessions.find(tenant, sandboxOf);
  if (!owner || owner.status === 'shutdown') throw notFound(`sandboxOf: no live session ${sandboxOf} on this runner`);
  return owner.sandboxOf ?? owner.id;
}

export async function sessionHealth(deps: SessionsDeps, rec: SessionRecord): Promise<{ healthy: boolean; error?: string }> {
  if (rec.status === 'shutdown') return { healthy: false, error: 'session shut down' };
  if (isSandboxSession(rec)) {
    const requested = rec.profile.workerSubstrate ?? deps.sandboxWorkers.defaultSubstrate;
    return deps.sandboxWorkers.offered().includes(requested) ? { healthy: true } : { healthy: false, error: `substrate ${requested} is not offered by this runner` };
  }
  const { endpoint } = deps.slots.slot(rec.runtime);
  if (!endpoint) return { healthy: false, error: `no worker configured for runtime ${rec.runtime}` };
  if (!(await endpoint.probe(HEALTH_PROBE_TIMEOUT_MS))) {
    return { healthy: false, error: `worker unreachable at ${endpoint.url}: ${endpoint.lastError() ?? 'no answer'}` };
  }
  return { healthy: true };
}

/** Sessions of `workerMode: "sandbox"` profiles run on a worker of their own, not on the runtime's sidecar. */
export function isSandboxSession(rec: SessionRecord): boolean {
  return rec.profile.workerMode === 'sandbox';
}
