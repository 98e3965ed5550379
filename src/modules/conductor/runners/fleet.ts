import { createRunnerClient, type RunnerClient, type RunnerInfo, type FetchLike, type ProfileSpec } from '../../../contracts/runner.client.ts';
import { runnerHashOfSession } from '../../../shared/ids.ts';
import type { Logger } from '../../../shared/log.ts';

/**
 * The runners a conductor drives: configured URLs (split roles) and/or the in-process runner (role all). Tracks each
 * runner's info (hash, startedAt) and liveness, and notices restarts so the reconcile loop can push state back.
 */
export interface FleetMember {
  url: string;
  client: RunnerClient;
  info: RunnerInfo | undefined;
  healthy: boolean;
  lastError: string | undefined;
  latencyMs: number | undefined;
}

export interface Fleet {
  members(): FleetMember[];
  /** The member that currently answers for `url`. */
  byUrl(url: string): FleetMember | undefined;
  /** The member whose hash is embedded in a session id. */
  byHash(hash: string): FleetMember | undefined;
  ownerOfSessionId(sessionId: string): FleetMember | undefined;
  /** A healthy runner for a new session, spreading sessions round-robin. */
  pick(): FleetMember | undefined;
  /** Probes every runner once; returns the members whose runner restarted (or came back) since the last probe. */
  probe(): Promise<FleetMember[]>;
}

export const IN_PROCESS_RUNNER_URL = 'http://runner.in-process';

/**
 * `prepareProfile`: what every profile goes to a runner as (the sandbox limits held to the tenant's ceilings,
 * sandbox-limits/). It is applied here, in the one client each runner has, so every path that sends a profile
 * (broadcast, restore, a session created or hydrated with its profile) sends it prepared.
 */
export type PrepareProfile = (tenant: string, profile: ProfileSpec) => Promise<ProfileSpec>;

/**
 * The runner of this process, when there is one: `direct` makes its client of the direct transport (called with
 * IN_PROCESS_RUNNER_URL); else `inProcess` is its app's `fetch`, for the HTTP client.
 */
export function createFleet(opts: { urls: readonly string[]; inProcess?: FetchLike; direct?: (baseUrl: string) => RunnerClient; internalToken?: string; log: Logger; probeTimeoutMs?: number; prepareProfile?: PrepareProfile }): Fleet {
  const members: FleetMember[] = [];
  if (opts.direct) members.push(member(IN_PROCESS_RUNNER_URL, undefined, opts.direct(IN_PROCESS_RUNNER_URL)));
  else if (opts.inProcess) members.push(member(IN_PROCESS_RUNNER_URL, opts.inProcess));
  for (const url of opts.urls) members.push(member(url));
  let cursor = 0;

  function member(url: string, fetchFn?: FetchLike, direct?: RunnerClient): FleetMember {
    const client = direct ?? createRunnerClient({ baseUrl: url, fetch: fetchFn, internalToken: opts.internalToken });
    return { url, client: opts.prepareProfile ? preparing(client, opts.prepareProfile) : client, info: undefined, healthy: false, lastError: undefined, latencyMs: undefined };
  }

  async function probeOne(m: FleetMember): Promise<boolean> {
    const started = performance.now();
    try {
      const info = await withTimeout(m.client.info(), opts.probeTimeoutMs ?? 2000);
      const restarted = !m.healthy || m.info?.startedAt !== info.startedAt || m.info?.id !== info.id;
      m.info = info;
      m.healthy = true;
      m.lastError = undefined;
      m.latencyMs = Math.round(performance.now() - started);
      return restarted;
    } catch (err) {
      if (m.healthy) opts.log.warn('runner unreachable', { url: m.url, error: err instanceof Error ? err.message : String(err) });
      m.healthy = false;
      m.lastError = err instanceof Error ? err.message : String(err);
      m.latencyMs = undefined;
      return false;
    }
  }

  return {
    members: () => members,
    byUrl: (url) => members.find((m) => m.url === url),
    byHash: (hash) => members.find((m) => m.info?.hash === hash),
    ownerOfSessionId(sessionId) {
      const hash = runnerHashOfSession(sessionId);
      return hash ? members.find((m) => m.info?.hash === hash) : undefined;
    },
    pick() {
      const healthy = members.filter((m) => m.healthy);
      if (healthy.length === 0) return undefined;
      return healthy[cursor++ % healthy.length];
    },
    async probe() {
      const restarted = await Promise.all(members.map(probeOne));
      return members.filter((_, i) => restarted[i]);
    },
  };
}

export function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

function preparing(client: RunnerClient, prepare: PrepareProfile): RunnerClient {
  return {
    ...client,
    putProfile: async (tenant, profile) => client.putProfile(tenant, await prepare(tenant, profile)),
    createSession: async (tenant, profileName, profile, o) => client.createSession(tenant, profileName, profile && (await prepare(tenant, profile)), o),
  };
}
