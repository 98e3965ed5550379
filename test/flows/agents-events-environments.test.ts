import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect, FAKE_MODEL, rawEvents, startAgentsHarness, textOf, type AgentsHarness } from '../support/agents.ts';
import { modelRequests } from '../support/fake-provider.ts';

/**
 * The event families a turn may carry besides text (seed 001, Events): reasoning summaries from a model that gives
 * them, the output of a command while it runs, and the environment's life (pending → ready → connected, or failed,
 * which fails the session); and hosted environments that set themselves up before their first turn (setup commands,
 * packages, `env`). All through the official `openai` 7.15.0 package against the fake provider.
 */
describe('reasoning, command output and self-setting-up environments', () => {
  let h: AgentsHarness;
  beforeAll(async () => {
    h = await startAgentsHarness();
  });
  afterAll(() => h?.stop());

  const sessions = () => h.client.beta.agents.sessions;
  type Ev = { type: string; [key: string]: any };
  const stream = async (sessionId: string, input: string) => (await collect(sessions().stream(sessionId, { input }))) as Ev[];
  const command = (script: string) => `CALL_TOOL run_command ${JSON.stringify({ command: 'sh', args: ['-c', script] })}`;

  it("assembles a reasoning model's summary deltas into the turn's reasoning item, with the agent's settings sent to the provider", async () => {
    expect((await h.svc.api('/api/providers/openai/key', { method: 'PUT', json: { key: 'sk-org-reasoning' } })).status).toBe(200);
    try {
      const agent = await h.client.beta.agents.create({ model: 'openai/gpt-5', reasoning: { effort: 'high', summary: 'detailed' }, service_tier: 'flex' });
      const session = await sessions().create({ agent_id: agent.id, environment: { type: 'none' } });
      const events = await stream(session.id, 'why is the sky blue?');

      const request = modelRequests(h.fake).at(-1)!;
      expect(request).toMatchObject({ wire: 'responses', body: { reasoning: { effort: 'high', summary: 'detailed' }, service_tier: 'flex' } });

      const reasoning = events.filter((e) => e.type.startsWith('agent.session.turn.reasoning_summary_'));
      expect(reasoning.map((e) => e.type.replace('agent.session.turn.', '')).filter((t, i, all) => t !== all[i - 1])).toEqual([
        'reasoning_summary_part.added', 'reasoning_summary_text.delta', 'reasoning_summary_text.done', 'reasoning_summary_part.done',
        'reasoning_summary_part.added', 'reasoning_summary_text.delta', 'reasoning_summary_text.done', 'reasoning_summary_part.done',
      ]);
      // the deltas of each part, concatenated, are that part's text in the final item
      const assembled: string[] = [];
      for (const e of reasoning) if (e.type.endsWith('text.delta')) assembled[e.summary_index] = (assembled[e.summary_index] ?? '') + e.delta;
      const done = events.find((e) => e.type === 'agent.session.turn.item.done' && e.item.type === 'reasoning')!;
      expect(done.item).toMatchObject({ type: 'reasoning', status: 'completed', turn_id: done.turn_id });
      expect(done.item.summary).toEqual(assembled.map((text) => ({ type: 'summary_text', text })));
      expect(assembled.join('')).toBe('Reading the prompt closely. Planning a short reply.');
      expect(new Set(reasoning.map((e) => e.item_id))).toEqual(new Set([done.item.id]));
      // reasoning comes first, then the answer, each with its own output index
      const answer = events.find((e) => e.type === 'agent.session.turn.item.done' && e.item.type === 'message')!;
      expect(done.output_index).toBeLessThan(answer.output_index);
      expect(textOf(events)).toBe('FAKE-REPLY: why is the sky blue?');
      // the item is part of the session's conversation
      const items = (await sessions().items.list(session.id, { order: 'asc' })).data as Ev[];
      expect(items.map((i) => i.type)).toEqual(['message', 'reasoning', 'message']);
      expect(items[1].summary).toEqual(done.item.summary);
    } finally {
      await h.svc.api('/api/providers/openai/key', { method: 'DELETE' });
    }
  });

  it('streams the output of a command the model runs as command_execution_output deltas on its call item', async () => {
    const agent = await h.client.beta.agents.create({ model: FAKE_MODEL });
    const session = await sessions().create({ agent_id: agent.id, environment: { type: 'openai_hosted' } });
    const events = await stream(session.id, command('echo first; echo second >&2; echo third'));
    const call = events.find((e) => e.type === 'agent.session.turn.item.added' && e.item.type === 'mcp_call')!;
    const deltas = events.filter((e) => e.type === 'agent.output.command_execution_output.delta');
    expect(deltas.length).toBeGreaterThan(0);
    expect(deltas.every((d) => d.item_id === call.item.id && d.output_index === call.output_index && d.turn_id === call.turn_id)).toBe(true);
    expect(deltas.map((d) => d.delta).join('').split('\n').filter(Boolean).sort()).toEqual(['first', 'second', 'third']);
    // the deltas come while the call is open: after item.added, before its item.done
    const at = (pred: (e: Ev) => boolean) => events.findIndex(pred);
    expect(at((e) => e === deltas[0])).toBeGreaterThan(at((e) => e === call));
    expect(at((e) => e === deltas.at(-1))).toBeLessThan(at((e) => e.type === 'agent.session.turn.item.done' && e.item.id === call.item.id));
  });

  it('runs setup commands once before the first turn, streams their output and sets env for commands without reading it back', async () => {
    const secret = 'env-value-never-read-back-4821';
    const template = await h.client.beta.agents.environments.templates.create({
      name: 'self-setting',
      env: { GREETING: secret },
      setup_commands: [{ command: 'echo "setting up with $GREETING"; echo ready > marker.txt' }, { command: 'pwd', cwd: '/workspace/sub' }],
    });
    expect(JSON.stringify(template)).not.toContain(secret);
    expect(JSON.stringify(await h.client.beta.agents.environments.templates.retrieve(template.id))).not.toContain(secret);

    const agent = await h.client.beta.agents.create({ model: FAKE_MODEL });
    const session = await sessions().create({ agent_id: agent.id, environment: { type: 'openai_hosted', environment_template_id: template.id } });
    expect(session.status).toBe('idle');
    const environmentId = (session.environment as { id: string }).id;
    expect((await h.client.beta.agents.environments.retrieve(environmentId)).status).toBe('pending');

    const events = await stream(session.id, command('cat marker.txt; echo "cmd sees $GREETING"'));
    const setup = events.filter((e) => e.type === 'agent.session.turn.item.done' && e.item.type === 'command_execution');
    expect(setup.map((e) => e.item)).toEqual([
      expect.objectContaining({ command: 'echo "setting up with $GREETING"; echo ready > marker.txt', cwd: '/workspace', exit_code: 0, status: 'completed', output: `setting up with ${secret}\n` }),
      expect.objectContaining({ command: 'pwd', cwd: '/workspace/sub', exit_code: 0, status: 'completed', output: '/work/sub\n' }),
    ]);
    const output = events.filter((e) => e.type === 'agent.output.command_execution_output.delta' && e.item_id === setup[0].item.id);
    expect(output.map((e) => e.delta).join('')).toBe(`setting up with ${secret}\n`);
    const env = events.filter((e) => e.type.startsWith('agent.session.environment.'));
    expect(env.map((e) => [e.type, e.environment.status, e.environment.id])).toEqual([
      ['agent.session.environment.ready', 'ready', environmentId],
      ['agent.session.environment.connected', 'connected', environmentId],
    ]);
    // setup came before the model's run, and the model's command sees its file and the env
    expect(events.findIndex((e) => e === env[0])).toBeLessThan(events.findIndex((e) => e.type === 'agent.session.turn.item.added' && e.item.type === 'mcp_call'));
    expect(textOf(events)).toBe(`TOOL-RESULT-SEEN: ready\ncmd sees ${secret}\n`);
    expect((await h.client.beta.agents.environments.retrieve(environmentId)).status).toBe('connected');

    // once: the next turn runs no setup
    const again = await stream(session.id, command('echo again'));
    expect(again.filter((e) => e.type === 'agent.session.turn.item.added' && e.item.type === 'command_execution')).toEqual([]);

    // the secret never comes back on the session, the environment or the template (model commands may print it)
    for (const text of [JSON.stringify(await sessions().retrieve(session.id)), JSON.stringify(await h.client.beta.agents.environments.retrieve(environmentId)), JSON.stringify(await h.client.beta.agents.environments.templates.list())]) {
      expect(text).not.toContain(secret);
    }
  });

  it('fails the environment and the session when a setup command fails, with its output', async () => {
    const agent = await h.client.beta.agents.create({ model: FAKE_MODEL });
    const session = await sessions().create({
      agent_id: agent.id,
      environment: { type: 'openai_hosted', setup_commands: [{ command: 'echo fine' }, { command: 'echo "missing dependency: libfoo" >&2; exit 3' }, { command: 'echo never' }] },
    });
    const environmentId = (session.environment as { id: string }).id;
    const events = await stream(session.id, 'hello');

    const tail = events.filter((e) => ['agent.session.environment.failed', 'agent.session.turn.failed', 'agent.session.failed', 'agent.session.idle'].includes(e.type));
    expect(tail.map((e) => e.type)).toEqual(['agent.session.environment.failed', 'agent.session.turn.failed', 'agent.session.failed']);
    expect(tail[0].environment).toMatchObject({ id: environmentId, status: 'failed', error: { code: 'setup_failed', type: 'sandbox_error', message: expect.stringContaining('missing dependency: libfoo') } });
    expect(tail[0].environment.error.message).toContain('exited with code 3');
    expect(tail[1].turn.error).toMatchObject({ code: 'sandbox_error', message: expect.stringContaining('missing dependency: libfoo') });
    expect(tail[2].session).toMatchObject({ id: session.id, status: 'failed', error: expect.stringContaining('missing dependency: libfoo') });
    const steps = events.filter((e) => e.type === 'agent.session.turn.item.done' && e.item.type === 'command_execution').map((e) => e.item);
    expect(steps.map((s) => [s.command, s.status, s.exit_code])).toEqual([['echo fine', 'completed', 0], ['echo "missing dependency: libfoo" >&2; exit 3', 'failed', 3]]);
    // the model was never called for it
    expect(events.some((e) => e.type === 'agent.session.turn.output_text.delta')).toBe(false);

    expect(await sessions().retrieve(session.id)).toMatchObject({ status: 'failed', error: expect.stringContaining('libfoo') });
    expect((await h.client.beta.agents.environments.retrieve(environmentId)).status).toBe('failed');
    await expect(sessions().events.create(session.id, { events: [{ type: 'agent.session.input.message', input: [{ role: 'user', content: [{ type: 'input_text', text: 'again?' }] }] }] })).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining('the session failed and can no longer run'),
    });
  });

  it('installs npm packages before the setup commands, without network, from a package folder in the workspace', async () => {
    const b64 = (text: string) => Buffer.from(text).toString('base64');
    const agent = await h.client.beta.agents.create({ model: FAKE_MODEL });
    const session = await sessions().create({
      agent_id: agent.id,
      environment: {
        type: 'openai_hosted',
        files: [
          { type: 'inline', path: '/workspace/hello/package.json', data: b64(JSON.stringify({ name: 'hello-cli', version: '1.0.0', bin: { 'hello-cli': 'cli.js' } })) },
          { type: 'inline', path: '/workspace/hello/cli.js', data: b64("#!/usr/bin/env node\nconsole.log('hello from an installed package');\n") },
        ],
        packages: { npm: ['file:/work/hello'] },
        setup_commands: [{ command: 'hello-cli' }],
        network: { access: 'disabled' },
      },
    });
    const events = await stream(session.id, command('hello-cli'));
    const steps = events.filter((e) => e.type === 'agent.session.turn.item.done' && e.item.type === 'command_execution').map((e) => e.item);
    expect(steps.map((s) => [s.command, s.status])).toEqual([['npm install --global file:/work/hello', 'completed'], ['hello-cli', 'completed']]);
    expect(steps[1].output).toBe('hello from an installed package\n');
    expect(textOf(events)).toBe('TOOL-RESULT-SEEN: hello from an installed package\n');
  });

  it('admits input and a cancel while the environment sets itself up', async () => {
    const agent = await h.client.beta.agents.create({ model: FAKE_MODEL });
    // a setup command that outlasts the test (it gives up after 30 s): the turn is cancelled while it runs
    const session = await sessions().create({
      agent_id: agent.id,
      environment: { type: 'openai_hosted', setup_commands: [{ command: 'echo waiting; i=0; while [ $i -lt 600 ] && [ ! -f never ]; do sleep 0.05; i=$((i+1)); done' }] },
    });
    const events = rawEvents(h, session.id);
    await events.response;
    const say = (text: string) => sessions().events.create(session.id, { events: [{ type: 'agent.session.input.message', input: [{ role: 'user', content: [{ type: 'input_text', text }] }] }] });
    await say('first'); // admitted at once (204), though the setup has not finished
    await events.until((f) => f.event === 'agent.output.command_execution_output.delta');
    await say('joins the turn');
    await sessions().events.create(session.id, { events: [{ type: 'agent.session.input.cancel' }] });
    await events.until((f) => f.event === 'agent.session.idle');
    await events.close();
    const types = events.frames.map((f) => f.event);
    expect(types.filter((t) => t === 'agent.session.turn.cancelled' || t === 'agent.session.idle')).toEqual(['agent.session.turn.cancelled', 'agent.session.idle']);
    expect(types).not.toContain('agent.session.turn.output_text.delta');
    expect((await sessions().retrieve(session.id)).status).toBe('idle');
  });

  it('announces pending, ready and connected at creation for an environment with nothing to set up', async () => {
    const agent = await h.client.beta.agents.create({ model: FAKE_MODEL });
    const session = await sessions().create({ agent_id: agent.id, environment: { type: 'openai_hosted' } });
    const replay = rawEvents(h, session.id, { 'Last-Event-ID': `evt_${session.id.split('-').at(-1)}_0` });
    await replay.until((f) => f.event === 'agent.session.environment.connected');
    await replay.close();
    expect(replay.frames.map((f) => f.event)).toEqual(['agent.session.created', 'agent.session.environment.pending', 'agent.session.environment.ready', 'agent.session.environment.connected']);
  });

  it('refuses packages no sandbox package manager installs, bad package names, and remote MCP servers in hosted environments', async () => {
    const templates = h.client.beta.agents.environments.templates;
    await expect(templates.create({ packages: { system: ['libfoo-dev'] } })).rejects.toMatchObject({ status: 400, message: expect.stringContaining('packages.system: system packages cannot be installed') });
    await expect(templates.create({ packages: { npm: ['--registry=http://evil'] } })).rejects.toMatchObject({ status: 400, message: expect.stringContaining('packages.npm.0: not a package name') });
    const accepted = await templates.create({ packages: { npm: ['left-pad@1.3.0'], python: ['requests==2.32.3'] } });
    expect(accepted.packages).toEqual({ npm: ['left-pad@1.3.0'], python: ['requests==2.32.3'], system: [] });
    const agent = await h.client.beta.agents.create({ model: FAKE_MODEL, tools: [{ type: 'mcp', server_label: 'docs', transport: { type: 'http', server_url: 'https://mcp.example.com/mcp' } }] });
    await expect(sessions().create({ agent_id: agent.id, environment: { type: 'openai_hosted' } })).rejects.toMatchObject({ status: 400, message: expect.stringContaining('remote MCP servers are blocked in hosted environments') });
    expect((await sessions().create({ agent_id: agent.id, environment: { type: 'none' } })).status).toBe('idle');
  });
});
