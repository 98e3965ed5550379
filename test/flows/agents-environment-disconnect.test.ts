import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { OWNER_KEY, startCluster, type Cluster, type ClusterNode } from '../support/cluster.ts';
import { waitForOutput } from '../support/process.ts';
import { collect, textOf } from '../support/agents.ts';

/**
 * A hosted environment lives on the runner that holds its session. When that runner is gone, the turn that cannot
 * reach it fails and the environment is `disconnected` (`agent.session.environment.disconnected`); once the runner is
 * back with its disk, the next turn announces it `connected` again. A runner that comes back without its disk (a fresh
 * machine) hands back an empty sandbox: the next turn restores it before the model runs (the environment's files, its
 * setup, and the files earlier turns left), says so in an item, and the environment is `ready` and `connected` again.
 * Real processes (conductor, runner, worker), the official `openai` 7.15.0 package against the conductor, the fake
 * model provider behind the organisation's own `openai-compatible` key.
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
    const key = await cluster.api(C, '/api/providers/openai-compatible/key', { method: 'PUT', json: { key: 'the-organisations-own-key' } });
    expect(key.status).toBe(200);
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  type Ev = { type: string; [key: string]: any };
  const turn = async (sessionId: string, input: string) => (await collect(client.beta.agents.sessions.stream(sessionId, { input }))) as Ev[];
  const envEvents = (events: Ev[]) => events.filter((e) => e.type.startsWith('agent.session.environment.')).map((e) => [e.type, e.environment.status]);
  const command = (script: string) => `CALL_TOOL run_command ${JSON.stringify({ command: 'sh', args: ['-c', script] })}`;
  const restart = async (keepDisk: boolean) => {
    await R.kill('SIGKILL');
    await R.start({ keepDisk });
    await waitForOutput(R.proc!, /announced to the conductor/, 15_000);
  };

  it('is disconnected by a turn that cannot reach it, connected again on a runner that kept its disk, and restored on one that did not', async () => {
    onTestFailed(() => console.error(cluster.logs()));
    const agent = await client.beta.agents.create({ model: 'openai-compatible/fake-model' });
    const session = await client.beta.agents.sessions.create({
      agent_id: agent.id,
      environment: {
        type: 'openai_hosted',
        files: [{ type: 'inline', path: '/workspace/notes.md', data: Buffer.from('from the environment').toString('base64') }],
        setup_commands: [{ command: 'echo set up > setup.txt' }],
      },
    });
    const environmentId = (session.environment as { id: string }).id;
    const first = await turn(session.id, command('echo made by a turn > made.txt'));
    expect(first.find((e) => e.type === 'agent.session.turn.completed')).toBeTruthy();
    const everything = command('cat notes.md setup.txt made.txt late.md');
    // a file added between turns reaches the sandbox before the next one
    await client.beta.agents.environments.files.create(environmentId, { type: 'inline', path: '/workspace/late.md', data: Buffer.from('added later').toString('base64') });
    expect(textOf(await turn(session.id, everything))).toContain('from the environment' + 'set up\n' + 'made by a turn\n' + 'added later');

    await R.kill('SIGKILL');
    const down = await turn(session.id, 'while it is down');
    expect(envEvents(down)).toEqual([['agent.session.environment.disconnected', 'disconnected']]);
    const failed = down.find((e) => e.type === 'agent.session.turn.failed')!;
    expect(failed.turn.error.code).toBe('connection_failed');
    expect(down.at(-1)!.type).toBe('agent.session.idle');
    expect((await client.beta.agents.environments.retrieve(environmentId)).status).toBe('disconnected');

    // the same runner, its disk kept: the sandbox is as it was
    await R.start({ keepDisk: true });
    await waitForOutput(R.proc!, /announced to the conductor/, 15_000);
    const back = await turn(session.id, everything);
    expect(envEvents(back)).toEqual([['agent.session.environment.connected', 'connected']]);
    expect(back.some((e) => e.item?.command === 'echo set up > setup.txt')).toBe(false); // not set up again
    expect(textOf(back)).toContain('from the environment' + 'set up\n' + 'made by a turn\n' + 'added later');
    expect((await client.beta.agents.environments.retrieve(environmentId)).status).toBe('connected');

    // a runner that lost its disk: restored before the model runs
    await restart(false);
    const restored = await turn(session.id, everything);
    expect(restored.at(-2)!.type).toBe('agent.session.turn.completed');
    expect(envEvents(restored)).toEqual([
      ['agent.session.environment.ready', 'ready'],
      ['agent.session.environment.connected', 'connected'],
    ]);
    const items = restored.filter((e) => e.type === 'agent.session.turn.item.done' && e.item.type === 'command_execution').map((e) => e.item);
    expect(items.map((i) => [i.command, i.status])).toEqual([
      ['echo set up > setup.txt', 'completed'],
      ['restore the sandbox', 'completed'],
    ]);
    expect(items[1].output).toContain('/workspace/made.txt');
    expect(textOf(restored)).toContain('from the environment' + 'set up\n' + 'made by a turn\n' + 'added later');
    expect((await client.beta.agents.environments.retrieve(environmentId)).status).toBe('connected');

    // a deleted artifact's bytes are gone: a later loss names the file instead of bringing it back
    const made = (await client.beta.agents.sessions.artifacts.list(session.id)).data.find((a) => a.path === '/workspace/made.txt')!;
    await client.beta.agents.sessions.artifacts.delete(made.id, { session_id: session.id });
    await restart(false);
    const partly = await turn(session.id, command('ls'));
    const note = partly.find((e) => e.type === 'agent.session.turn.item.done' && e.item.command === 'restore the sandbox')!.item;
    expect(note.status).toBe('incomplete');
    expect(note.output).toContain('not restored (their artifacts were deleted, and their bytes with them): /workspace/made.txt');
    expect(textOf(partly)).not.toContain('made.txt');
    expect(textOf(partly)).toContain('notes.md');
  }, 120_000);
});
