/**
 * Benchmark: how long a new sandbox session waits for its first event, on the `process` substrate (a worker process
 * in bubblewrap) beside the `container` substrate (a container per session), in the same run against the same runner.
 * Each sample is a new session's first run, timed from the request to the first event of its stream (and to its
 * terminal event); the session is deleted after it, so every sample starts a worker from nothing. Substrates alternate
 * sample by sample, so load on the machine falls on both alike.
 *
 * The runner is `svc serve --role=runner` from this clone (its boot bundle when fresh, as `npm start` runs); the
 * container substrate mounts that same program into the image (SVC_WORKER_PROGRAM=mount, default image
 * node:24-bookworm-slim: deploy/node-base-image.sh builds one offline). The model is the fake provider, in this process.
 *
 *   npm run bench:sandbox-start -- [--samples 10] [--image node:24-bookworm-slim]
 */
import { parseArgs } from 'node:util';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRunnerClient } from '../src/contracts/runner.client.ts';
import { configureLogging } from '../src/shared/log.ts';
import { startFakeProvider } from '../test/support/fake-provider.ts';
import { percentile, startProcess } from './lib.ts';

configureLogging({ level: 'warn' });
const { values } = parseArgs({ options: { samples: { type: 'string', default: '10' }, image: { type: 'string', default: 'node:24-bookworm-slim' } } });
const SAMPLES = Number(values.samples);
const TENANT = 'default';
const TOKEN = 'bench-internal-token';

const fake = await startFakeProvider();
const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-sandbox-'));
const runner = await startProcess(['--role=runner'], {
  SVC_INTERNAL_TOKEN: TOKEN,
  SVC_DATA_DIR: dataDir,
  SVC_WORKER_TOKEN_SECRET: 'bench-worker-token-secret-0123456789abcdef',
  SVC_WORKER_IMAGE: values.image!,
  SVC_WORKER_IMAGE_PULL: 'never',
  SVC_WORKER_PROGRAM: 'mount',
  OPENAI_COMPATIBLE_BASE_URL: fake.url,
  ...(process.env.DOCKER_HOST ? { DOCKER_HOST: process.env.DOCKER_HOST } : {}),
});
const client = createRunnerClient({ baseUrl: runner.url, internalToken: TOKEN });
try {
  const info = await client.info();
  if (!info.substrates.includes('container') || !info.substrates.includes('process')) throw new Error(`the runner offers ${info.substrates.join(', ') || 'no substrate'}; both are needed`);
  const substrates = ['process', 'container'] as const;
  for (const s of substrates) await client.putProfile(TENANT, { name: s, runtime: 'general', model: 'openai-compatible:fake-model', workerMode: 'sandbox', workerSubstrate: s });
  const first: Record<string, number[]> = { process: [], container: [] };
  const total: Record<string, number[]> = { process: [], container: [] };
  // one warm-up each (the engine's first container, the page cache), then the samples
  for (let i = -1; i < SAMPLES; i++) {
    for (const s of i % 2 ? substrates : [...substrates].reverse()) {
      const sessionId = await client.createSession(TENANT, s);
      const t0 = performance.now();
      let firstMs = 0;
      let last = '';
      for await (const event of await client.run(TENANT, { profile: s, sessionId, prompt: 'hello' })) {
        firstMs ||= performance.now() - t0;
        last = event.type;
      }
      const totalMs = performance.now() - t0;
      if (last !== 'result') throw new Error(`${s}: the run ended with ${last}`);
      await client.deleteSession(TENANT, sessionId);
      if (i < 0) continue;
      first[s].push(firstMs);
      total[s].push(totalMs);
    }
  }
  const fmt = (xs: number[], p: number) => Math.round(percentile([...xs].sort((a, b) => a - b), p));
  console.log(`new sandbox session, first run: ${SAMPLES} samples per substrate, alternating (runner ${runner.url}, image ${values.image})`);
  console.log('substrate   first event p50  p95   result p50  p95  (ms)');
  for (const s of substrates) console.log(`${s.padEnd(11)} ${String(fmt(first[s], 50)).padStart(15)} ${String(fmt(first[s], 95)).padStart(5)} ${String(fmt(total[s], 50)).padStart(11)} ${String(fmt(total[s], 95)).padStart(5)}`);
} finally {
  await runner.stop();
  await fake.close();
  rmSync(dataDir, { recursive: true, force: true });
}
