import { createHash } from 'node:crypto';
import type { ContainerConfig } from '../../../../config/config.ts';
import { limitExceeded, limitMessage, type LimitExceeded, type SandboxLimits } from '../../../../contracts/sandbox-limits.ts';
import { describeError } from '../../../../shared/errors.ts';
import { randomId } from '../../../../shared/ids.ts';
import { createLogger } from '../../../../shared/log.ts';
import { probe } from '../../../../shared/readiness.ts';
import type { SandboxMount } from '../../sandbox/index.ts';
import type { LaunchedWorker, SubstrateStatus, WorkerLaunch, WorkerSubstrate } from '../substrate.ts';
import { execInContainer } from './container-exec.ts';
import { giveOwnership } from './container-ownership.ts';
import { byPath, containerBody, engineDisk, LABEL, NO_STORAGE_OPT, refusesStorageOpt, RELAY_PORT, type EngineDisk } from './container-spec.ts';
import { createEngine, EngineError, type Engine } from './engine.ts';

/**
 * The `container` substrate: one container per sandbox session through the Docker Engine API (Docker, or Podman's
 * compatible socket), running this program's worker in outbound mode as the process substrate does (container-spec.ts
 * says what the container is given). The session's state lives in a named volume per session, backed by the session's
 * folder on the runner's disk (the engine's `local` driver, bound), so it outlives its containers, the runner hydrates
 * into it, and a replacement worker restores the conversation.
 *
 * Lifecycle: launch creates and starts a container; pause lets the worker export its state and exit, and leaves the
 * container stopped (volume kept); resume starts the same container again; a container that died or was removed is
 * `gone`, and the next run launches a replacement on the same volume. The engine not answering is `unknown`. A runner
 * that starts finds the containers labelled with its id: they belong to its previous process (their callback socket
 * and token died with it), so they are removed; their volumes are kept for their sessions' next workers to adopt,
 * and removed after SVC_RUNNER_ADOPT_GRACE_MS if no run of that session comes.
 *
 * Limits: the session's (WorkerLaunch.limits) become the container's (container-spec.ts, hostConfigLimits), shared by
 * the worker and the commands exec'd in it. A container the kernel OOM-killed (the engine's State.OOMKilled, its
 * worker dead of SIGKILL) ends its worker with the memory limit named (`exited.limit`), its lease `gone`; the next
 * run launches a replacement. A command killed for a limit is named in its result (container-exec.ts).
 */
export const CONTAINER_SUBSTRATE = 'container';
const STDERR_TAIL = 4096;
/** A paused container is started again while its worker token (24 h) is young; an older one is replaced. */
const REUSE_MS = 12 * 3_600_000;
const ENGINE_TIMEOUT_MS = 5_000;
const log = createLogger('runner:substrate:container');

export interface ContainerSubstrateDeps {
  config: ContainerConfig;
  /** `svc.runner` on everything created: the runner's id (`runner-<hash>`), the same across its restarts. */
  runnerId: string;
  adoptGraceMs: number;
}

/** One container of a session; `removed` once gone for good (a later run creates a new one). */
interface Box {
  sessionId: string;
  name: string;
  id: string | undefined;
  createdAt: number;
  files: readonly SandboxMount[];
  limits: SandboxLimits;
  /** The OOM kills of the container's cgroup accounted for (to commands); a start makes a new cgroup, from 0. */
  memory: { oomKills: number };
  removed: boolean;
}

/** One life of a container (launch, or a resume of the same container): what its LaunchedWorker reports. */
interface Life {
  box: Box;
  state: 'running' | 'gone' | 'unknown';
  tail: string;
  /** Stopped by the runner (stop, or pause): its end is not a limit's. */
  stopping: boolean;
  settle(r: { code: number | null; signal: string | null; limit?: LimitExceeded }): void;
}

const sameLimits = (a: SandboxLimits, b: SandboxLimits) => (Object.keys(a) as Array<keyof SandboxLimits>).every((k) => a[k] === b[k]);
const key = (runnerId: string, sessionId: string) => createHash('sha256').update(`${runnerId}\0${sessionId}`).digest('hex').slice(0, 16);

export function createContainerSubstrate(deps: ContainerSubstrateDeps): WorkerSubstrate {
  const { config, runnerId } = deps;
  const engine: Engine = createEngine(config.dockerHost);
  const commandUser = `${config.uid + 1}:${config.gid + 1}`;
  let current: SubstrateStatus = { offered: false, detail: 'checking the container engine' };
  let engineText = '';
  let disk: EngineDisk = NO_STORAGE_OPT;
  const boxes = new Map<string, Box>();
  const lives = new Map<LaunchedWorker, Life>();
  const orphans = new Map<string, NodeJS.Timeout>();
  let closed = false;
  const volumeOf = (sessionId: string) => `svc-state-${key(runnerId, sessionId)}`;

  async function imageStatus(image: string): Promise<SubstrateStatus> {
    const present = await engine.imagePresent(image);
    if (config.pull === 'always' || (!present && config.pull === 'missing')) {
      // pulled in the background: the runner starts meanwhile, offering `container` once the image is there
      if (!present) current = { offered: false, detail: `pulling image ${image}` };
      void engine.pullImage(image).then(
        () => (current = offeredStatus(image)),
        (err) => {
          log.warn('pulling the worker image failed', { image, error: describeError(err) });
          if (!present) current = { offered: false, detail: `not offered: pulling image ${image} failed: ${describeError(err)}` };
        },
      );
      return present ? offeredStatus(image) : current;
    }
    return present ? offeredStatus(image) : { offered: false, detail: `not offered: image ${image} is not present (SVC_WORKER_IMAGE_PULL=never)` };
  }
  const offeredStatus = (image: string): SubstrateStatus => ({ offered: true, detail: `one container per session on ${engineText}, image ${image}; ${limitsText()}` });
  const limitsText = () => `limits by the engine: memory and swap, CPU quota, pids, rlimits (open files, file size, no core; CPU time per command); disk: ${disk.detail}`;

  /** The previous process's containers go; their volumes wait for their sessions (adopted) or the grace to end. */
  async function sweep(): Promise<void> {
    const filter = [`${LABEL.runner}=${runnerId}`];
    const stale = await engine.listContainers(filter);
    await Promise.all(stale.map((c) => engine.removeContainer(c.Id)));
    const volumes = await engine.listVolumes(filter);
    for (const v of volumes) {
      const sessionId = v.Labels?.[LABEL.session];
      if (!sessionId || boxes.has(sessionId)) continue;
      const timer = setTimeout(() => {
        orphans.delete(sessionId);
        void engine.removeVolume(v.Name).catch((err) => log.warn('removing an orphaned state volume failed', { volume: v.Name, error: describeError(err) }));
      }, deps.adoptGraceMs);
      timer.unref();
      orphans.set(sessionId, timer);
    }
    if (stale.length || volumes.length) log.info('containers of a previous runner process found', { removed: stale.length, volumesKept: orphans.size, graceMs: deps.adoptGraceMs });
  }

  const ready = (async (): Promise<SubstrateStatus> => {
    try {
      const v = await engine.version(ENGINE_TIMEOUT_MS);
      const name = v.Components?.some((c) => /podman/i.test(c.Name)) ? 'podman' : 'docker';
      engineText = `${name} ${v.Version} (API ${v.ApiVersion}) at ${engine.address}`;
      disk = engineDisk(await engine.info(ENGINE_TIMEOUT_MS).catch(() => ({ Driver: 'unknown' })));
      current = await imageStatus(config.image);
      await sweep();
    } catch (err) {
      current = { offered: false, detail: `not offered: the container engine at ${engine.address} does not answer: ${describeError(err)}` };
    }
    log.info('container substrate', { offered: current.offered, detail: current.detail });
    return current;
  })();

  async function ensureVolume(l: WorkerLaunch): Promise<string> {
    const name = volumeOf(l.sessionId);
    clearTimeout(orphans.get(l.sessionId));
    orphans.delete(l.sessionId);
    const labels = { [LABEL.tenant]: l.tenant, [LABEL.session]: l.sessionId, [LABEL.runner]: runnerId };
    await engine.createVolume(name, { Driver: 'local', DriverOpts: { type: 'none', o: 'bind', device: l.sessionDir }, Labels: labels });
    return name;
  }

  function newLife(box: Box): { worker: LaunchedWorker; life: Life } {
    let settle!: Life['settle'];
    const exited = new Promise<{ code: number | null; signal: string | null; limit?: LimitExceeded }>((resolve) => (settle = resolve));
    const life: Life = { box, state: 'running', tail: '', stopping: false, settle };
    const worker: LaunchedWorker = { workerId: box.name, pid: undefined, startedAt: new Date().toISOString(), exited, stderrTail: () => life.tail.trim() };
    lives.set(worker, life);
    void exited.then(() => lives.delete(worker));
    return { worker, life };
  }

  /** Follows a started container until it stops; an engine that stops answering makes it `unknown` meanwhile. */
  async function watch(life: Life): Promise<void> {
    const id = life.box.id!;
    for (let ended = false; !ended; ) {
      try {
        await engine.waitContainer(id);
        break;
      } catch (err) {
        if (closed || (err instanceof EngineError && err.status === 404)) break;
        life.state = 'unknown';
      }
      // until the engine answers again: then the container is still running (wait again) or it is not (gone)
      for (let delay = 500; !closed; delay = Math.min(delay * 2, 5_000)) {
        await new Promise((r) => setTimeout(r, delay));
        try {
          const info = await engine.inspectContainer(id);
          ended = !info?.State.Running;
          life.state = 'running';
          break;
        } catch {
          // still unknown
        }
      }
      if (closed) break;
    }
    const info = await engine.inspectContainer(id).catch(() => undefined);
    const logs = await engine.logsTail(id, 20).catch(() => '');
    // OOMKilled says the cgroup saw an OOM kill during this start (Docker 20.10 sets it for a command's too); the
    // worker died of it when the container ended with SIGKILL without the runner stopping it
    const limit = info?.State.OOMKilled && info.State.ExitCode === 128 + 9 && !life.stopping ? limitExceeded('memoryMiB', life.box.limits.memoryMiB, 'worker') : undefined;
    life.tail = (logs + (limit ? `\n${limitMessage(limit)}` : '')).slice(-STDERR_TAIL);
    life.state = 'gone';
    life.settle({ code: limit ? null : (info?.State.ExitCode ?? null), signal: limit ? 'SIGKILL' : null, ...(limit ? { limit } : {}) });
  }

  /** Creates (or, with `reuse`, starts again) the box's container and follows it; failures end the life with why. */
  async function bringUp(l: WorkerLaunch, life: Life, runnerUrl: string, reuse: boolean): Promise<void> {
    const box = life.box;
    try {
      // every start: what the runner wrote meanwhile (a hydrated bundle) must be the worker's to rewrite
      giveOwnership(l, config);
      if (!reuse) {
        const volume = await ensureVolume(l);
        const image = l.image ?? config.image;
        if (l.image && !(await engine.imagePresent(image))) {
          if (config.pull === 'never') throw new Error(`image ${image} is not present (SVC_WORKER_IMAGE_PULL=never)`);
          await engine.pullImage(image);
        }
        if (Number(new URL(runnerUrl).port) !== RELAY_PORT) throw new Error(`runner URL ${runnerUrl} is not the container's relay`);
        box.id = await create(box.name, (d) => containerBody({ launch: l, image, volume, runnerId, config, disk: d }));
      }
      if (life.stopping) throw new Error('stopped before it started');
      box.memory.oomKills = 0;
      await engine.startContainer(box.id!);
      await watch(life);
    } catch (err) {
      life.tail = `${life.tail}\n${describeError(err)}`.slice(-STDERR_TAIL);
      if (box.id && !reuse) await engine.removeContainer(box.id).catch(() => {});
      box.removed = true;
      life.state = 'gone';
      life.settle({ code: null, signal: null });
    }
  }

  /** Creates a container; an engine that refuses the disk cap (xfs without pquota) is asked again without it, and remembered. */
  async function create(name: string, body: (d: EngineDisk) => Record<string, unknown>): Promise<string> {
    try {
      return await engine.createContainer(name, body(disk));
    } catch (err) {
      if (!disk.storageOpt || !(err instanceof EngineError) || !refusesStorageOpt(err.message)) throw err;
      disk = { storageOpt: false, detail: `the engine refused a writable-layer cap (${err.message}); it is read-only anyway` };
      log.warn('the container engine cannot cap a writable layer: containers are created without StorageOpt', { error: err.message });
      if (current.offered) current = offeredStatus(config.image);
      return await engine.createContainer(name, body(disk));
    }
  }

  function launch(launched: WorkerLaunch, runnerUrl: string): LaunchedWorker {
    const l = { ...launched, files: byPath(launched.files) };
    const previous = boxes.get(l.sessionId);
    const box: Box = { sessionId: l.sessionId, name: `svc-w-${key(runnerId, l.sessionId)}-${randomId(6)}`, id: undefined, createdAt: Date.now(), files: l.files, limits: l.limits, memory: { oomKills: 0 }, removed: false };
    boxes.set(l.sessionId, box);
    const { worker, life } = newLife(box);
    void (async () => {
      // a replacement: what is left of the session's previous container goes first
      if (previous?.id && !previous.removed) await engine.removeContainer(previous.id).catch(() => {});
      await bringUp(l, life, runnerUrl, false);
    })();
    return worker;
  }

  function resume(resumed: WorkerLaunch, runnerUrl: string): LaunchedWorker {
    const l = { ...resumed, files: byPath(resumed.files) };
    const box = boxes.get(l.sessionId);
    // a container is started again only with the limits it was created with: changed limits take a new one
    if (!box?.id || box.removed || Date.now() - box.createdAt > REUSE_MS || !sameLimits(box.limits, l.limits) || [...lives.values()].some((x) => x.box === box)) return launch(l, runnerUrl);
    const { worker, life } = newLife(box);
    void bringUp(l, life, runnerUrl, true);
    return worker;
  }

  async function removeBox(box: Box): Promise<void> {
    box.removed = true;
    if (box.id) await engine.removeContainer(box.id);
  }

  return {
    id: CONTAINER_SUBSTRATE,
    ready: () => ready,
    status: () => current,
    // the worker's relay on the container's own loopback turns this into the callback socket
    runnerUrlFor: async () => `http://127.0.0.1:${RELAY_PORT}`,
    launch,
    resume,
    async pause(worker, graceMs) {
      const life = lives.get(worker);
      if (!life) return;
      let timer: NodeJS.Timeout | undefined;
      life.stopping = true;
      const exited = await Promise.race([worker.exited.then(() => true), new Promise<false>((r) => (timer = setTimeout(() => r(false), graceMs)))]);
      clearTimeout(timer);
      // stopped, not removed: its volume and the container stay for the next run
      if (!exited && life.box.id) await engine.stopContainer(life.box.id, 2).catch(() => {});
      await worker.exited;
    },
    async stop(worker) {
      const life = lives.get(worker);
      if (!life) return;
      life.stopping = true;
      await removeBox(life.box).catch((err) => log.warn('removing a worker container failed', { workerId: worker.workerId, error: describeError(err) }));
      await worker.exited;
    },
    state: (worker) => lives.get(worker)?.state ?? 'gone',
    async forget(sessionId) {
      const box = boxes.get(sessionId);
      boxes.delete(sessionId);
      if (box && !box.removed) await removeBox(box).catch(() => {});
      clearTimeout(orphans.get(sessionId));
      orphans.delete(sessionId);
      await engine.removeVolume(volumeOf(sessionId)).catch((err) => log.warn('removing a state volume failed', { sessionId, error: describeError(err) }));
    },
    async exec(sessionId, spec) {
      const box = boxes.get(sessionId);
      const life = box && [...lives.values()].find((x) => x.box === box);
      if (!box?.id || life?.state !== 'running') throw new Error(`run_command: the container of session ${sessionId} is not running (commands run in it while the session has a run)`);
      const sees = (target: string) => box.files.some((m) => m.target === target);
      return execInContainer({ engine, containerId: box.id, user: commandUser, cwd: sees('/work') ? '/work' : '/tmp', home: sees('/home') ? '/home' : '/tmp', limits: box.limits, memory: box.memory }, spec);
    },
    async readiness() {
      let detail = '';
      const check = await probe('container engine', async () => {
        const v = await engine.version(ENGINE_TIMEOUT_MS);
        const present = await engine.imagePresent(config.image);
        detail = `${v.Components?.some((c) => /podman/i.test(c.Name)) ? 'podman' : 'docker'} ${v.Version} (API ${v.ApiVersion}) at ${engine.address}, image ${config.image} ${present ? 'present' : 'absent'}; ${limitsText()}`;
        if (!present) throw new Error(`${detail} (SVC_WORKER_IMAGE_PULL=${config.pull})`);
      }, ENGINE_TIMEOUT_MS);
      // what the runner offers follows what the engine answers now
      if (check.ok) {
        if (!current.offered && engineText) current = offeredStatus(config.image);
        return { ...check, detail };
      }
      current = { offered: false, detail: `not offered: ${check.error}` };
      return check;
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const t of orphans.values()) clearTimeout(t);
      await engine.close();
    },
  };
}
