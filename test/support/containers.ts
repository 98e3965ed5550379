import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import type { ContainerConfig } from '../../src/config/config.ts';
import { createEngine, type Engine } from '../../src/modules/runner/substrates/container/engine.ts';

/**
 * The container tests' engine and base image. They run the code under test, not a snapshot of it: the workers mount
 * this working tree's program and Node read-only into a plain Debian image with a `node` user (SVC_WORKER_PROGRAM=
 * mount), the stand-in of `node:24-bookworm-slim` that deploy/node-base-image.sh builds offline. The global setup
 * builds it once when an engine answers and it is absent. Without an engine the container tests skip, except under
 * CI=true, where they fail (.ci/run installs and starts dockerd).
 */
export const BASE_IMAGE = 'node:24-bookworm-slim';

export async function engineAnswers(): Promise<boolean> {
  const engine = createEngine(process.env.DOCKER_HOST);
  try {
    await engine.ping(3000);
    return true;
  } catch {
    return false;
  } finally {
    await engine.close();
  }
}

/** Builds the base image once (deploy/node-base-image.sh does nothing when it is present). */
export async function ensureBaseImage(): Promise<void> {
  if (!(await engineAnswers())) {
    if (process.env.CI) throw new Error(`[svc tests] no container engine answers at ${process.env.DOCKER_HOST || 'unix:///var/run/docker.sock'}: the container tests need one under CI (start dockerd)`);
    process.stderr.write('[svc tests] no container engine answers: the container tests are skipped\n');
    return;
  }
  const engine = createEngine(process.env.DOCKER_HOST);
  const present = await engine.imagePresent(BASE_IMAGE).finally(() => engine.close());
  if (present) return;
  process.stderr.write(`[svc tests] building the container tests' base image ${BASE_IMAGE} (deploy/node-base-image.sh, about a minute)\n`);
  const r = spawnSync('bash', [join(import.meta.dirname, '../../deploy/node-base-image.sh')], { stdio: 'inherit' });
  if (r.status !== 0) throw new Error(`[svc tests] deploy/node-base-image.sh failed (${r.error?.message ?? `exit ${r.status}, signal ${r.signal}`})`);
}

/** The container substrate as the tests run it: this tree's program in the base image (limits: the profile's). */
export function testContainerConfig(over: Partial<ContainerConfig> = {}): ContainerConfig {
  return { dockerHost: process.env.DOCKER_HOST, image: BASE_IMAGE, pull: 'never', program: 'mount', uid: 1000, gid: 1000, ...over };
}

export const testEngine = (): Engine => createEngine(process.env.DOCKER_HOST);

/**
 * The engine behind a socket of the test's own, which it can cut (the engine stops answering: every connection dropped,
 * nothing listening) and restore, as an engine restarting or a lost remote engine would look to the runner.
 */
export async function engineProxy(path: string): Promise<{ address: string; cut(): Promise<void>; restore(): Promise<void>; close(): Promise<void> }> {
  const upstream = (process.env.DOCKER_HOST || 'unix:///var/run/docker.sock').replace(/^unix:\/\//, '');
  const open = new Set<Socket>();
  let server: Server | undefined;
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      rmSync(path, { force: true });
      server = createServer((client) => {
        const engine = connect(upstream);
        for (const s of [client, engine]) {
          open.add(s);
          s.on('close', () => open.delete(s));
          s.on('error', () => (s === client ? engine : client).destroy());
        }
        client.pipe(engine).pipe(client);
      });
      server.once('error', reject);
      server.listen(path, () => resolve());
    });
  const cut = async () => {
    const listening = server;
    server = undefined;
    for (const s of open) s.destroy();
    if (listening) await new Promise<void>((resolve) => listening.close(() => resolve()));
  };
  await listen();
  return { address: `unix://${path}`, cut, restore: listen, close: cut };
}
