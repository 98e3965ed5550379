import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { OWNER_KEY, startCluster, type Cluster, type ClusterNode } from '../support/cluster.ts';
import { waitForOutput } from '../support/process.ts';
import { collect } from '../support/agents.ts';

/**
 * A hosted environment lives on the runner that holds its session. When that runner is gone, the turn that cannot
 * reach it fails and the environment is `disconnected` (`agent.session.environment.disconnected`); once the runner is
 * back, the next turn announces it `connected` again. Real processes (conductor, runner, worker), the official
 * `openai` 7.15.0 package against the conductor.
 */
describe('a hosted environment whose runner goes away', () => {
  let cluster: Cluster;
  let C: ClusterNode;
  let R: ClusterNode;
  let client: OpenAI;

  beforeAll(async () => {
    cluster = await startCluster({ conductors: 1, runners: 1, reconcileMs: 120_000, announce: true });
    [C] = cluster.conductors;
    [R] = cluster.runners;
    client = new OpenAI({ baseURL: `${C.url}/v1`, apiKey: OWNER_KEY, maxRetries: 0 });
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  type Ev = { type: string; [key: string]: any };
  const turn = async (sessionId: string, input: string) => (await collect(client.beta.agents.sessions.stream(sessionId, { input }))) as Ev[];
  const envEvents = (events: Ev[]) => events.filter((e) => e.type.startsWith('agent.session.environment.')).map((e) => [e.type, e.environment.status]);

  it('is disconnected by a turn that cannot reach it, and connected again by the next turn that can', async () => {
    onTestFailed(() => console.error(cluster.logs()));
    const agent = await client.beta.agents.create({ model: 'svc/demo/echo' });
    const session = await client.beta.agents.sessions.create({ agent_id: agent.id, environment: { type: 'openai_hosted' } });
    const environmentId = (session.environment as { id: string }).id;
    expect((await turn(session.id, 'before')).find((e) => e.type === 'agent.session.turn.completed')).toBeTruthy();

    await R.kill('SIGKILL');
    const down = await turn(session.id, 'while it is down');
    expect(envEvents(down)).toEqual([['agent.session.environment.disconnected', 'disconnected']]);
    const failed = down.find((e) => e.type === 'agent.session.turn.failed')!;
    expect(failed.turn.error.code).toBe('connection_failed');
    expect(down.at(-1)!.type).toBe('agent.session.idle');
    expect((await client.beta.agents.environments.retrieve(environmentId)).status).toBe('disconnected');

    await R.start();
    await waitForOutput(R.proc!, /announced to the conductor/, 15_000);
    const back = await turn(session.id, 'after the restart');
    expect(envEvents(back)).toEqual([['agent.session.environment.connected', 'connected']]);
    expect(back.map((e) => e.type)).toContain('agent.session.turn.completed');
    expect((await client.beta.agents.environments.retrieve(environmentId)).status).toBe('connected');
  }, 60_000);
});
