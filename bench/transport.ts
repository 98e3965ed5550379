/**
 * Benchmark: the two transports between co-located roles, side by side in this process. A runner beside a worker
 * (role all's wiring), driven as the conductor drives it for a plain run of a new conversation: createSession, an
 * adoptable `run` read to its end, `exportState`. Once through their contracts' HTTP clients on the modules' own
 * `app.fetch` (in-process, Request/Response and NDJSON in between: how role all called them before), once through the
 * direct transport (function calls and RunEvent objects). Legs alternate in six rounds, so drift of a shared machine
 * falls on both; CPU is this process's (client, runner, worker and the fake provider, the same for both legs).
 *
 *   node bench/transport.ts [deltas=10] [runs=600]
 */
import { configureLogging } from '../src/shared/log.ts';
import { createRunnerClient, type RunnerClient } from '../src/contracts/runner.client.ts';
import { createRunner, type Runner } from '../src/modules/runner/index.ts';
import { createWorker } from '../src/modules/worker/index.ts';
import { startFakeProvider } from '../test/support/fake-provider.ts';
import { listen } from '../test/support/listen.ts';
import { runnerDefaults } from '../test/support/runner.ts';
import { workerConfig } from '../test/support/worker.ts';

configureLogging({ level: 'warn' });
const fake = await startFakeProvider();
const deltas = Number(process.argv[2] ?? 10);
const N = Number(process.argv[3] ?? 600);
let seq = 0;
async function setup(direct: boolean) {
  const w = createWorker({ config: workerConfig({ providerEnv: { OPENAI_COMPATIBLE_BASE_URL: fake.url } }) });
  let runner: Runner | undefined;
  const http = await listen((req) => runner!.app.fetch(req));
  runner = createRunner({ config: runnerDefaults(), internalToken: 'tok', publicUrl: http.url, version: 'bench', probeIntervalMs: 0,
    ...(direct ? { workerDirect: (u: string) => w.direct(u) } : { workerFetch: (req: Request) => w.app.fetch(req) }) });
  const r = runner;
  const client: RunnerClient = direct ? r.direct(http.url) : createRunnerClient({ baseUrl: http.url, fetch: (req) => r.app.fetch(req), internalToken: 'tok' });
  await client.putProfile('default', { name: 'bench', runtime: 'general', model: 'openai-compatible:fake-model' });
  return async () => {
    const sid = await client.createSession('default', 'bench');
    for await (const e of await client.run('default', { id: `run-${++seq}`, profile: 'bench', sessionId: sid, prompt: `DELTAS ${deltas}` }, undefined, { adoptable: true })) void e;
    await client.exportState('default', sid);
  };
}
const legs = { http: await setup(false), direct: await setup(true) };
for (const once of Object.values(legs)) for (let i = 0; i < 30; i++) await once();
const totals: Record<string, { cpu: number; ms: number; n: number }> = { http: { cpu: 0, ms: 0, n: 0 }, direct: { cpu: 0, ms: 0, n: 0 } };
for (let round = 0; round < 6; round++) {
  for (const [name, once] of Object.entries(legs)) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    for (let i = 0; i < N / 6; i++) await once();
    const c = process.cpuUsage(c0);
    totals[name].cpu += (c.user + c.system) / 1000;
    totals[name].ms += performance.now() - t0;
    totals[name].n += N / 6;
  }
}
for (const [name, t] of Object.entries(totals)) console.log(`${name}: ${(t.cpu / t.n).toFixed(2)} ms CPU per run (this process: client, runner, worker, fake provider), ${(t.ms / t.n).toFixed(2)} ms wall per run, DELTAS ${deltas}, ${t.n} runs`);
process.exit(0);
