import { Pool } from 'undici';

/**
 * A small client of the Docker Engine API (which Podman's compatible socket also speaks), for the `container`
 * substrate: the dozen calls it makes, over undici on the engine's unix socket (or a plain `tcp://` address). Chosen
 * over dockerode, whose current major brings gRPC, protobuf and ssh2 (for BuildKit sessions and ssh transports we do
 * not use) to what is, here, JSON over one socket plus one stream format (`demux` below). Paths are unversioned, so
 * the engine answers in its own API version: Docker 20.10 (API 1.41) and later, and Podman, alike.
 */
export class EngineError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.name = 'EngineError';
    this.status = status;
  }
}

export interface EngineVersion {
  Version: string;
  ApiVersion: string;
  /** `Podman Engine` on Podman; Docker lists `Engine` first. */
  Components?: Array<{ Name: string; Version: string }>;
}

/** What `GET /info` says of the storage driver (Docker; Podman answers the same fields). */
export interface EngineInfo {
  Driver?: string;
  DriverStatus?: Array<[string, string]> | null;
  CgroupVersion?: string;
}

export interface ContainerSummary {
  Id: string;
  Names: string[];
  State: string;
  Labels: Record<string, string>;
}

export interface ContainerInspect {
  Id: string;
  Created: string;
  State: { Status: string; Running: boolean; ExitCode: number; OOMKilled: boolean; StartedAt: string; Error?: string };
  Config: { Labels: Record<string, string> | null };
}

export interface ExecOptions {
  Cmd: string[];
  Env: string[];
  User: string;
  WorkingDir: string;
}

export interface Engine {
  /** Where it talks to (`unix:///var/run/docker.sock`), for messages. */
  readonly address: string;
  ping(timeoutMs: number): Promise<void>;
  version(timeoutMs: number): Promise<EngineVersion>;
  info(timeoutMs: number): Promise<EngineInfo>;
  imagePresent(image: string): Promise<boolean>;
  pullImage(image: string): Promise<void>;
  createVolume(name: string, body: Record<string, unknown>): Promise<void>;
  removeVolume(name: string): Promise<void>;
  listVolumes(labels: string[]): Promise<Array<{ Name: string; Labels: Record<string, string> | null }>>;
  createContainer(name: string, body: Record<string, unknown>): Promise<string>;
  startContainer(id: string): Promise<void>;
  stopContainer(id: string, timeoutS: number): Promise<void>;
  removeContainer(id: string): Promise<void>;
  inspectContainer(id: string): Promise<ContainerInspect | undefined>;
  /** Settles with the exit code once the container has stopped (a long request: no timeout). */
  waitContainer(id: string): Promise<number>;
  listContainers(labels: string[]): Promise<ContainerSummary[]>;
  /** The last lines a container wrote (stdout and stderr). */
  logsTail(id: string, lines: number): Promise<string>;
  /** Runs a command in a running container; `onOutput` gets stdout (1) and stderr (2) as they arrive. */
  exec(id: string, opts: ExecOptions, onOutput: (stream: 1 | 2, chunk: Buffer) => void, signal?: AbortSignal): Promise<number | null>;
  close(): Promise<void>;
}

/** `DOCKER_HOST` as undici sees it: a unix socket (the default) or a plain http address. */
export function engineTarget(dockerHost: string | undefined): { origin: string; socketPath?: string; address: string } {
  const raw = dockerHost || 'unix:///var/run/docker.sock';
  if (raw.startsWith('unix://')) return { origin: 'http://localhost', socketPath: raw.slice('unix://'.length), address: raw };
  if (raw.startsWith('tcp://') || raw.startsWith('http://')) return { origin: `http://${raw.replace(/^(tcp|http):\/\//, '')}`, address: raw };
  throw new Error(`DOCKER_HOST "${raw}": only unix:// sockets and plain tcp:// addresses are supported`);
}

export function createEngine(dockerHost: string | undefined): Engine {
  const target = engineTarget(dockerHost);
  // a pool, not one connection: container waits and command streams hold theirs for as long as they run
  const pool = new Pool(target.origin, { ...(target.socketPath ? { socketPath: target.socketPath } : {}), connections: null, keepAliveTimeout: 5_000 });

  async function call(method: string, path: string, opts: { body?: unknown; ok?: number[]; timeoutMs?: number; long?: boolean } = {}): Promise<{ status: number; body: unknown }> {
    const res = await pool.request({
      method: method as 'GET',
      path,
      headers: opts.body === undefined ? {} : { 'content-type': 'application/json' },
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      headersTimeout: opts.long ? 0 : (opts.timeoutMs ?? 30_000),
      bodyTimeout: opts.long ? 0 : (opts.timeoutMs ?? 30_000),
    });
    const text = await res.body.text();
    let body: unknown = text;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      // plain text (ping's "OK")
    }
    if (res.statusCode >= 400 && !(opts.ok ?? []).includes(res.statusCode)) {
      const message = (body as { message?: string } | undefined)?.message ?? (typeof body === 'string' ? body.trim() : '') ?? '';
      throw new EngineError(res.statusCode, `${method} ${path.split('?')[0]}: ${res.statusCode} ${message}`.trim());
    }
    return { status: res.statusCode, body };
  }

  const labelFilter = (labels: string[]) => encodeURIComponent(JSON.stringify({ label: labels }));

  return {
    address: target.address,
    async ping(timeoutMs) {
      await call('GET', '/_ping', { timeoutMs });
    },
    async version(timeoutMs) {
      return (await call('GET', '/version', { timeoutMs })).body as EngineVersion;
    },
    async info(timeoutMs) {
      return (await call('GET', '/info', { timeoutMs })).body as EngineInfo;
    },
    async imagePresent(image) {
      return (await call('GET', `/images/${encodeURIComponent(image)}/json`, { ok: [404] })).status === 200;
    },
    async pullImage(image) {
      const [name, tag] = splitImage(image);
      const res = await pool.request({ method: 'POST', path: `/images/create?fromImage=${encodeURIComponent(name)}&tag=${encodeURIComponent(tag)}`, headersTimeout: 0, bodyTimeout: 0 });
      const text = await res.body.text();
      // a failed pull can answer 200 and name its error in the progress stream
      const failed = text.split('\n').map((l) => (l.trim() ? (JSON.parse(l) as { error?: string; message?: string }) : {})).find((m) => m.error || (res.statusCode >= 400 && m.message));
      if (res.statusCode >= 400 || failed) throw new EngineError(res.statusCode, `pulling ${image}: ${failed?.error ?? failed?.message ?? res.statusCode}`);
    },
    async createVolume(name, body) {
      await call('POST', '/volumes/create', { body: { Name: name, ...body } });
    },
    async removeVolume(name) {
      await call('DELETE', `/volumes/${encodeURIComponent(name)}`, { ok: [404] });
    },
    async listVolumes(labels) {
      const body = (await call('GET', `/volumes?filters=${labelFilter(labels)}`)).body as { Volumes: Array<{ Name: string; Labels: Record<string, string> | null }> | null };
      return body.Volumes ?? [];
    },
    async createContainer(name, body) {
      return ((await call('POST', `/containers/create?name=${encodeURIComponent(name)}`, { body })).body as { Id: string }).Id;
    },
    async startContainer(id) {
      await call('POST', `/containers/${id}/start`, { ok: [304] });
    },
    async stopContainer(id, timeoutS) {
      await call('POST', `/containers/${id}/stop?t=${timeoutS}`, { ok: [304, 404], timeoutMs: (timeoutS + 30) * 1000 });
    },
    async removeContainer(id) {
      // v: with its anonymous volumes (an image's VOLUME, such as the svc image's /data); named ones stay
      await call('DELETE', `/containers/${id}?force=true&v=true`, { ok: [404] });
    },
    async inspectContainer(id) {
      const r = await call('GET', `/containers/${id}/json`, { ok: [404] });
      return r.status === 404 ? undefined : (r.body as ContainerInspect);
    },
    async waitContainer(id) {
      return ((await call('POST', `/containers/${id}/wait`, { long: true })).body as { StatusCode: number }).StatusCode;
    },
    async listContainers(labels) {
      return (await call('GET', `/containers/json?all=true&filters=${labelFilter(labels)}`)).body as ContainerSummary[];
    },
    async logsTail(id, lines) {
      const res = await pool.request({ method: 'GET', path: `/containers/${id}/logs?stdout=true&stderr=true&tail=${lines}`, headersTimeout: 10_000, bodyTimeout: 10_000 });
      const parts: Buffer[] = [];
      const frames = demux((_, chunk) => parts.push(chunk));
      for await (const chunk of res.body) frames(chunk as Buffer);
      return Buffer.concat(parts).toString('utf8');
    },
    async exec(id, opts, onOutput, signal) {
      const created = (await call('POST', `/containers/${id}/exec`, { body: { ...opts, AttachStdout: true, AttachStderr: true, AttachStdin: false, Tty: false } })).body as { Id: string };
      const res = await pool.request({
        method: 'POST',
        path: `/exec/${created.Id}/start`,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ Detach: false, Tty: false }),
        headersTimeout: 0,
        bodyTimeout: 0,
        signal,
      });
      if (res.statusCode >= 400) throw new EngineError(res.statusCode, `exec start: ${res.statusCode} ${await res.body.text()}`);
      const frames = demux(onOutput);
      try {
        for await (const chunk of res.body) frames(chunk as Buffer);
      } catch (err) {
        if (!signal?.aborted) throw err;
      }
      const inspected = (await call('GET', `/exec/${created.Id}/json`)).body as { Running: boolean; ExitCode: number | null };
      return inspected.Running ? null : inspected.ExitCode;
    },
    // waits and streams still open are cut: the runner is closing
    close: () => pool.destroy(),
  };
}

/** `name[:tag]` (a registry port's colon is not a tag); the tag defaults to `latest`, as the engine's CLI does. */
export function splitImage(image: string): [string, string] {
  const at = image.lastIndexOf(':');
  if (at > image.lastIndexOf('/') && at > 0) return [image.slice(0, at), image.slice(at + 1)];
  return [image, 'latest'];
}

/**
 * The engine's multiplexed stream of a command without a terminal: frames of an 8-byte header (stream 1 stdout or 2
 * stderr, three zero bytes, the payload's length as a big-endian uint32) and the payload. Frames arrive split across
 * and packed into chunks alike.
 */
export function demux(onOutput: (stream: 1 | 2, chunk: Buffer) => void): (chunk: Buffer) => void {
  let pending: Buffer = Buffer.alloc(0);
  return (chunk) => {
    pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    while (pending.length >= 8) {
      const size = pending.readUInt32BE(4);
      if (pending.length < 8 + size) break;
      const stream = pending[0] === 2 ? 2 : 1;
      if (size) onOutput(stream, pending.subarray(8, 8 + size));
      pending = pending.subarray(8 + size);
    }
  };
}
