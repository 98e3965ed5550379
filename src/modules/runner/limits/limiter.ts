import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import {
  DEFAULT_CEILINGS, DEFAULT_LIMITS, defaultTotalCpus, effectiveLimits, LIMIT_KEYS, LIMIT_LABEL, limitExceeded, limitMessage,
  type LimitEnforcement, type LimitExceeded, type LimitKey, type LimitScope, type LimitsConfig, type LimitsReport, type SandboxLimits, type SandboxLimitsOverride,
} from '../../../contracts/sandbox-limits.ts';
import { createLogger } from '../../../shared/log.ts';
import type { Metrics } from '../../../shared/metrics.ts';
import type { CheckResult } from '../../../shared/readiness.ts';
import { cgroupMounts, cgroupV1, cgroupV2, ownCgroups, type CgroupDriver, type Group } from './cgroups.ts';
import { createSessionDisks, probeDisks, type SessionDisks } from './disks.ts';
import { prlimitArgs } from './rlimits.ts';
import { findOnPath } from '../sandbox/sandbox.ts';

/**
 * The runner's sandbox limits: what this host can enforce (probed once at start: cgroups v2 or v1, util-linux
 * prlimit, loop-mounted ext4 disks), and a jail per command, stdio MCP server and sandbox worker that holds it to
 * its session's effective limits. `SVC_SANDBOX_LIMITS` decides what a gap means: `require` refuses sandbox work,
 * `best-effort` enforces what it can and says what it cannot, `off` enforces nothing (the output cap stays: it
 * protects the runner itself).
 */
export interface Usage {
  /** CPU time of the whole group, in seconds. */
  cpuSeconds?: number;
  memoryPeakMiB?: number;
  pidsPeak?: number;
}

export interface Verdict {
  limit?: LimitExceeded;
  /** `memory limit 512 MiB reached: killed`, when a limit tripped. */
  message?: string;
  usage?: Usage;
}

export interface ExitFacts {
  code: number | null;
  signal: string | null;
  /** The runner's wall-time timer ended it. */
  wallTripped?: boolean;
  /** Output past `outputBytes` was dropped. */
  truncated?: boolean;
  stderr?: string;
}

/** Scopes whose process lives across runs (a sandbox worker): no CPU-time cap over its whole life, only its CPU quota. */
const LIFELONG: ReadonlySet<LimitScope> = new Set<LimitScope>(['worker']);

/** One process tree held to one set of limits: a cgroup of its own, rlimits in the child. */
export interface Jail {
  readonly limits: SandboxLimits;
  readonly scope: LimitScope;
  /** The outermost command line: joins the jail's cgroups, then execs `argv` (no moment runs outside them). */
  enter(argv: readonly [string, ...string[]]): readonly [string, ...string[]];
  /** `argv` under the rlimits (prlimit execs it): `nproc` only inside a sandbox's own user namespace. */
  rlimit(argv: readonly [string, ...string[]], o: { nproc: boolean }): readonly [string, ...string[]];
  /** Kills every process of the jail at once. */
  kill(): Promise<void>;
  /** What ended the tree, read from the kernel once it has exited (the caller counts it: Limiter.tripped). */
  verdict(exit: ExitFacts): Promise<Verdict>;
  close(): Promise<void>;
}

export interface Limiter {
  ready(): Promise<LimitsReport>;
  report(): LimitsReport;
  /** Why sandbox work is refused (`require` and a limit this host cannot enforce), else undefined. */
  refusal(): string | undefined;
  /** A session's effective limits: its profile's overrides over the operator's defaults, held to the ceilings. */
  limitsOf(profile: { limits?: SandboxLimitsOverride }): SandboxLimits;
  /** A jail of its own for one process tree, in its tenant's and session's groups; call once `ready()` has settled (throws before). */
  jail(o: { sessionId: string; tenant: string; scope: LimitScope; limits: SandboxLimits }): Jail;
  /** The folder of a session's disk (made and mounted on first use), or undefined where disks are not enforced. */
  sessionDisk(sessionId: string, limits: SandboxLimits): Promise<string | undefined>;
  /** Where session disks are mounted (the VirtualFS's base for `/work`), when they are enforced. */
  diskRoot(): string | undefined;
  /** The mounted disk of a session, once made. */
  diskOf(sessionId: string): string | undefined;
  releaseSession(sessionId: string): Promise<void>;
  /** For `/readyz`: `sandbox limits`, failing only when `require` cannot be met. */
  readiness(): CheckResult;
  /** Counts a tripped limit in `svc_sandbox_limit_kills_total` (output cut short is not a kill). */
  tripped(limit: LimitExceeded): void;
  close(): Promise<void>;
}

export interface LimiterOptions {
  config?: LimitsConfig;
  dataDir: string;
  searchPath: string;
  /** Names the runner's cgroup subtree (`svc-<hash>-<pid>-<n>`). */
  runnerHash: string;
  metrics?: Metrics;
}

const log = createLogger('runner:limits');
let seq = 0;

/** Joins each cgroup listed (count first), then execs the rest: the program never runs outside its group. */
const JOIN =
  'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || { echo "svc-limits: cannot join the cgroup $1" >&2; exit 125; }; shift; n=$((n-1)); done; exec "$@"';

const OFF: LimitsConfig = { mode: 'off', defaults: DEFAULT_LIMITS, ceilings: DEFAULT_CEILINGS };

const sessionKey = (sessionId: string) => `s-${createHash('sha256').update(sessionId).digest('hex').slice(0, 16)}`;
const tenantKey = (tenant: string) => `t-${createHash('sha256').update(tenant).digest('hex').slice(0, 16)}`;
/** Every tenant's group weighs the same (the kernel's default weight, written so it holds whatever the parent says). */
const TENANT_WEIGHT = 100;

function swapOn(): boolean {
  try {
    return readFileSync('/proc/swaps', 'utf8').trim().split('\n').length > 1;
  } catch {
    return false;
  }
}

/** The cgroup tree to use: v2 where it has the memory controller, else v1 where mounted, else v2 for kill and usage only. */
function discover(name: string): { driver?: CgroupDriver; why: string } {
  let mounts;
  let own;
  try {
    mounts = cgroupMounts();
    own = ownCgroups();
  } catch (err) {
    return { why: `cgroups cannot be read here (${(err as Error).message})` };
  }
  const v2 = mounts.find((m) => m.version === 2 && existsSync(join(m.dir, 'cgroup.controllers')));
  const v2Controllers = (() => {
    if (!v2) return [];
    try {
      const ownDir = join(v2.dir, own.get('') ?? '/');
      return readFileSync(join(ownDir, 'cgroup.controllers'), 'utf8').trim().split(/\s+/);
    } catch {
      return [];
    }
  })();
  const tries: Array<() => CgroupDriver | undefined> = [];
  if (v2 && v2Controllers.includes('memory')) tries.push(() => cgroupV2(v2, own, name));
  if (mounts.some((m) => m.version === 1 && m.controllers.some((c) => ['memory', 'pids', 'cpu'].includes(c)))) tries.push(() => cgroupV1(mounts, own, name));
  if (v2 && !v2Controllers.includes('memory')) tries.push(() => cgroupV2(v2, own, name));
  const failures: string[] = [];
  for (const t of tries) {
    try {
      const driver = t();
      if (driver) return { driver, why: '' };
    } catch (err) {
      failures.push((err as Error).message);
    }
  }
  if (!mounts.length) return { why: 'no cgroup filesystem is mounted (/sys/fs/cgroup)' };
  return { why: `no writable cgroup (run the runner as root or give it a delegated cgroup subtree)${failures.length ? `: ${failures.join('; ')}` : ''}` };
}

const runs = (file: string, args: string[]) => new Promise<boolean>((resolve) => execFile(file, args, (err) => resolve(!err)));

export function createLimiter(o: LimiterOptions): Limiter {
  const config = o.config ?? OFF;
  const totalCpus = config.totalCpus ?? defaultTotalCpus(availableParallelism());
  const name = `svc-${o.runnerHash}-${process.pid}-${++seq}`;
  let driver: CgroupDriver | undefined;
  let prlimit: string | undefined;
  let disks: SessionDisks | undefined;
  const sessions = new Map<string, Group>();
  /** Tenant groups made so far (kept for the runner's life: one folder per tenant, removed at close). */
  const tenants = new Set<string>();
  const kills = o.metrics?.counter({
    name: 'svc_sandbox_limit_kills_total',
    help: 'Commands, stdio MCP servers and sandbox workers a sandbox limit ended or refused, by limit.',
    labels: ['limit'],
    initial: LIMIT_KEYS.filter((k) => k !== 'outputBytes' && k !== 'cpus').map((k) => ({ limit: LIMIT_LABEL[k] })),
  });

  const none = (): LimitEnforcement => Object.fromEntries(LIMIT_KEYS.map((k) => [k, 'none'])) as LimitEnforcement;
  let current: LimitsReport = { mode: config.mode, enforced: { ...none(), outputBytes: 'runner' }, missing: config.mode === 'off' ? [] : ['checking what this host can enforce'], defaults: config.defaults, ceilings: config.ceilings };

  async function probe(): Promise<LimitsReport> {
    const enforced = { ...none(), outputBytes: 'runner' };
    if (config.mode === 'off') return { ...current, enforced, missing: [] };
    const missing: string[] = [];
    const found = discover(name);
    driver = found.driver;
    const asRoot = process.getuid?.() === 0;
    const p = findOnPath('prlimit', o.searchPath);
    if (p && (await runs(p, ['--core=0:0', '--', 'true']))) prlimit = p;
    const tools = {
      mkfs: findOnPath('mkfs.ext4', `${o.searchPath}:/usr/sbin:/sbin`),
      mount: findOnPath('mount', `${o.searchPath}:/usr/bin:/bin`),
      umount: findOnPath('umount', `${o.searchPath}:/usr/bin:/bin`),
    };
    const disk = await probeDisks(tools);
    if (disk.ok) disks = createSessionDisks({ dataDir: o.dataDir, mkfs: tools.mkfs!, mount: tools.mount!, umount: tools.umount! });

    const cg = driver?.version ?? 'none';
    const cgMissing = (key: LimitKey, controller: string) => {
      const absent = driver?.absent.find((a) => a.startsWith(`${controller}:`));
      missing.push(`${LIMIT_LABEL[key]}: ${absent ? absent.slice(controller.length + 2) : driver ? `no ${controller} controller` : found.why}`);
    };
    if (driver?.has.memory) {
      enforced.memoryMiB = cg;
      if (!driver.has.swap && swapOn()) missing.push('memory: swap is not counted (no memory.memsw / memory.swap.max; boot with swapaccount=1 or turn swap off)');
    } else cgMissing('memoryMiB', 'memory');
    let total: number | undefined;
    if (driver?.has.cpu) {
      enforced.cpus = cg;
      try {
        // all sandboxes together, whatever each session may use: the runner, its workers and its database keep the rest
        // (its weight stays the kernel's default: a lower one starved the sandboxes on a busy host without a clear gain, see docs/performance.md)
        driver.limitSubtree({ cpus: totalCpus });
        total = totalCpus;
      } catch (err) {
        missing.push(`cpu: the CPU cap on all sandboxes together (SVC_SANDBOX_TOTAL_CPUS ${totalCpus}) cannot be set here (${(err as Error).message})`);
      }
    } else cgMissing('cpus', 'cpu');
    if (driver?.has.pids) enforced.pids = cg;
    else if (prlimit && !asRoot) enforced.pids = 'rlimit';
    else cgMissing('pids', 'pids');
    enforced.wallSeconds = 'timer';
    for (const k of ['cpuSeconds', 'fileMiB', 'openFiles'] as const) {
      if (prlimit) enforced[k] = 'rlimit';
      else missing.push(`${LIMIT_LABEL[k]}: util-linux prlimit is not installed (Debian: util-linux)`);
    }
    if (disk.ok) enforced.diskMiB = 'loop-ext4';
    else missing.push(`disk: ${disk.why}`);
    const report = { ...current, enforced, missing, ...(total !== undefined ? { totalCpus: total } : {}) };
    const gaps = LIMIT_KEYS.filter((k) => enforced[k] === 'none');
    if (gaps.length) log.warn(config.mode === 'require' ? 'sandbox limits required but not all enforceable: sandbox work is refused' : 'some sandbox limits are not enforced here', { missing });
    else log.debug('sandbox limits enforced', { enforced, where: driver?.where });
    return report;
  }

  let probeDone = false;
  const probed = probe().then((r) => {
    probeDone = true;
    return (current = r);
  });

  function count(limit: LimitExceeded | undefined) {
    if (limit && limit.key !== 'outputBytes') kills?.inc({ limit: limit.limit });
  }

  /** A session's CPU quota, within the cap on all sandboxes (cgroup v1 refuses a child's quota above its parent's). */
  const cpusOf = (limits: SandboxLimits) => (current.totalCpus !== undefined ? Math.min(limits.cpus, current.totalCpus) : limits.cpus);

  /** The tenant's group (its CPU weight: a tenant's sessions together weigh as much as another tenant's) and the session's. */
  function sessionGroup(sessionId: string, tenant: string, limits: SandboxLimits): string[] {
    const path = [tenantKey(tenant), sessionKey(sessionId)];
    if (!driver) return path;
    if (!tenants.has(path[0])) {
      driver.group([path[0]], driver.has.cpu ? { cpuWeight: TENANT_WEIGHT } : {});
      tenants.add(path[0]);
    }
    // a session's commands and worker share its CPU quota; memory and processes are held per command and worker
    const g = driver.group(path, driver.has.cpu ? { cpus: cpusOf(limits) } : {});
    sessions.set(sessionId, g);
    return path;
  }

  async function verdictOf(group: Group | undefined, limits: SandboxLimits, scope: LimitScope, sessionId: string, exit: ExitFacts): Promise<Verdict> {
    const s = group?.stats();
    const usage: Usage | undefined = s && {
      ...(s.cpuNs !== undefined ? { cpuSeconds: Math.round(s.cpuNs / 1e6) / 1000 } : {}),
      ...(s.memoryPeakBytes !== undefined ? { memoryPeakMiB: Math.round((s.memoryPeakBytes / 1048576) * 10) / 10 } : {}),
      ...(s.pidsPeak !== undefined ? { pidsPeak: s.pidsPeak } : {}),
    };
    const sig = (name: string, n: number) => exit.signal === name || exit.code === 128 + n;
    const failed = exit.code !== 0;
    let hit: { key: LimitKey; outcome: string } | undefined;
    if (s && s.oomKills > 0) hit = { key: 'memoryMiB', outcome: 'killed' };
    else if (!LIFELONG.has(scope) && (sig('SIGXCPU', 24) || (sig('SIGKILL', 9) && s?.cpuNs !== undefined && s.cpuNs >= limits.cpuSeconds * 1e9))) hit = { key: 'cpuSeconds', outcome: 'killed' };
    else if (sig('SIGXFSZ', 25)) hit = { key: 'fileMiB', outcome: 'killed' };
    else if (failed && /File too large/.test(exit.stderr ?? '')) hit = { key: 'fileMiB', outcome: 'write refused' };
    else if (failed && disks && (await disks.full(sessionId))) hit = { key: 'diskMiB', outcome: 'write refused' };
    else if (s && s.pidsRefused > 0) hit = { key: 'pids', outcome: exit.wallTripped ? 'fork refused, then killed at the wall time' : 'fork refused' };
    else if (exit.wallTripped) hit = { key: 'wallSeconds', outcome: 'killed' };
    else if (exit.truncated) hit = { key: 'outputBytes', outcome: 'the rest truncated' };
    if (!hit) return { usage };
    const limit = limitExceeded(hit.key, limits[hit.key], scope);
    return { limit, message: limitMessage(limit, hit.outcome), usage };
  }

  function refusal(): string | undefined {
    if (config.mode !== 'require') return undefined;
    const gaps = LIMIT_KEYS.filter((k) => current.enforced[k] === 'none');
    if (!gaps.length) return undefined;
    return `SVC_SANDBOX_LIMITS=require and this runner cannot enforce ${gaps.map((k) => LIMIT_LABEL[k]).join(', ')} (${current.missing.join('; ')}); fix the host (see README, "Command sandbox") or set SVC_SANDBOX_LIMITS=best-effort`;
  }

  return {
    ready: () => probed,
    report: () => current,
    refusal,
    limitsOf: (profile) => effectiveLimits(config, config.ceilings, profile.limits),
    jail({ sessionId, tenant, scope, limits }) {
      if (!probeDone) throw new Error('the sandbox limits are still being checked');
      const on = config.mode !== 'off';
      let group: Group | undefined;
      if (on && driver) {
        const path = sessionGroup(sessionId, tenant, limits);
        group = driver.group([...path, `${scope}-${++seq}`], {
          ...(driver.has.memory ? { memoryBytes: limits.memoryMiB * 1024 * 1024 } : {}),
          ...(driver.has.pids ? { pids: limits.pids } : {}),
          ...(driver.has.cpu ? { cpus: cpusOf(limits) } : {}),
        });
      }
      const asRoot = process.getuid?.() === 0;
      return {
        limits,
        scope,
        enter: (argv) => (group ? ['/bin/sh', '-c', JOIN, 'svc-limits', String(group.procsFiles.length), ...group.procsFiles, ...argv] : argv),
        rlimit: (argv, r) => (on && prlimit ? [prlimit, ...prlimitArgs(limits, { nproc: r.nproc && !asRoot, asRoot, cpu: !LIFELONG.has(scope) }), '--', ...argv] : argv),
        kill: async () => group?.kill(),
        verdict: (exit) => verdictOf(group, limits, scope, sessionId, exit),
        close: async () => {
          await group?.remove().catch((err) => log.warn('removing a cgroup failed', { path: group?.path, error: String(err) }));
        },
      };
    },
    async sessionDisk(sessionId, limits) {
      await probed;
      if (config.mode === 'off' || !disks) return undefined;
      return disks.prepare(sessionId, limits.diskMiB);
    },
    diskRoot: () => (config.mode !== 'off' ? disks?.root : undefined),
    diskOf: (sessionId) => disks?.mountOf(sessionId),
    async releaseSession(sessionId) {
      const g = sessions.get(sessionId);
      sessions.delete(sessionId);
      await Promise.all([g?.remove(), disks?.release(sessionId)]).catch((err) => log.warn('releasing a session\'s limits failed', { sessionId, error: String(err) }));
    },
    readiness() {
      const r = current;
      if (r.mode === 'off') return { name: 'sandbox limits', ok: true, ms: 0, detail: 'SVC_SANDBOX_LIMITS=off: nothing an agent starts is limited (but its output)' };
      const how = `${LIMIT_KEYS.map((k) => `${LIMIT_LABEL[k]} ${r.enforced[k]}`).join(', ')}${r.totalCpus !== undefined ? `; all sandboxes together at most ${r.totalCpus} CPUs` : ''}`;
      const refused = refusal();
      if (refused) return { name: 'sandbox limits', ok: false, ms: 0, error: refused };
      if (r.missing.length) return { name: 'sandbox limits', ok: true, ms: 0, detail: `warning: ${r.mode}, not enforced here: ${r.missing.join('; ')} (${how})` };
      return { name: 'sandbox limits', ok: true, ms: 0, detail: how };
    },
    tripped: count,
    async close() {
      await probed;
      await disks?.close();
      await driver?.close();
    },
  };
}
