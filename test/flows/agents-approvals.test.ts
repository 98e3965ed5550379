import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAKE_MODEL, isTurnEnd, reader, startAgentsHarness, textOf, type AgentsHarness } from '../support/agents.ts';

/**
 * Permission policies of a /v1 agent's built-in tools (`agent_toolset`, in Claude Managed Agents' naming) and the
 * `tool_approval` required action, driven by the official `openai` 7.15.0 client against the real server with the
 * fake model provider: an `always_ask` tool's call waits with the session `requires_action`, the client approves or
 * denies it through the session's input events (beside the function-tool pattern), and a disabled tool never runs.
 */
describe('/v1 agent permission policies and tool approvals', () => {
  let h: AgentsHarness;
  // the fields are svc's extension: the SDK's types do not name them, its requests carry them as given
  const agents = () => h.client.beta.agents as any;
  const sessions = () => h.client.beta.agents.sessions as any;
  const write = (content: string) => `CALL_TOOL fs_write {"path":"note.txt","content":"${content}"}`;
  const toolset = {
    default_config: { permission_policy: { type: 'always_allow' } },
    configs: [
      { name: 'fs_write', permission_policy: { type: 'always_ask' } },
      { name: 'run_command', enabled: false },
    ],
  };
  let agentId: string;

  /** A session on a hosted environment, its event stream open, and a message sent. */
  async function ask(message: string) {
    const session = await sessions().create({ agent_id: agentId, environment: { type: 'openai_hosted' } });
    const stream = reader<any>(await sessions().events.stream(session.id));
    await sessions().events.create(session.id, { events: [{ type: 'agent.session.input.message', input: [{ role: 'user', content: [{ type: 'input_text', text: message }] }] }] });
    return { session, stream };
  }
  async function waitingAction(stream: ReturnType<typeof reader<any>>) {
    const seen = await stream.until((e) => e.type === 'agent.session.requires_action' && e.session.required_actions.some((r: any) => r.type === 'tool_approval'));
    return seen.at(-1).session.required_actions.find((r: any) => r.type === 'tool_approval');
  }

  beforeAll(async () => {
    h = await startAgentsHarness();
    const agent = await agents().create({ model: FAKE_MODEL, agent_toolset: toolset });
    agentId = agent.id;
  });
  afterAll(() => h?.stop());

  it('keeps the policy on the agent with its defaults, and refuses what the gate cannot enforce', async () => {
    const agent = await agents().retrieve(agentId);
    expect(agent.agent_toolset).toEqual({
      default_config: { permission_policy: { type: 'always_allow' } },
      configs: [
        { name: 'fs_write', enabled: true, permission_policy: { type: 'always_ask' } },
        { name: 'run_command', enabled: false, permission_policy: null },
      ],
    });
    const refused = async (agent_toolset: unknown) => {
      const err = await agents().create({ model: FAKE_MODEL, agent_toolset }).catch((e: any) => e);
      expect(err.status).toBe(400);
      return err.error.message as string;
    };
    expect(await refused({ configs: [{ name: 'fs_wrte', permission_policy: { type: 'always_ask' } }] })).toMatch(/^agent_toolset\.configs\[0\]\.name: unknown tool/);
    expect(await refused({ configs: [{ name: '@nope', enabled: false }] })).toMatch(/^agent_toolset\.configs\[0\]\.name: unknown bundle/);
    expect(await refused({ default_config: { permission_policy: { type: 'auto' } } })).toContain('always_allow');
    // cleared with null
    const cleared = await agents().update((await agents().create({ model: FAKE_MODEL, agent_toolset: toolset })).id, { agent_toolset: null });
    expect(cleared.agent_toolset).toBeUndefined();
  });

  it('shows an always_ask call as a tool_approval required action, and runs the tool once the client approves', async () => {
    const { session, stream } = await ask(write('approved on v1'));
    const action = await waitingAction(stream);
    expect(action).toEqual({ type: 'tool_approval', id: expect.stringMatching(/^apr_/), tool_name: 'fs_write', arguments: expect.any(String), turn_id: expect.stringMatching(/^turn_/) });
    expect(JSON.parse(action.arguments)).toEqual({ path: 'note.txt', content: 'approved on v1' });
    const waiting = await sessions().retrieve(session.id);
    expect(waiting.status).toBe('requires_action');
    expect(waiting.required_actions).toEqual([action]);
    // the same approval, as /api lists it: the run waits
    const pending = await (await h.svc.api(`/api/approvals/${action.id}`)).json();
    expect(pending).toMatchObject({ status: 'pending', toolName: 'fs_write' });
    expect((await (await h.svc.api(`/api/runs/${pending.runId}`)).json()).status).toBe('waiting');

    await sessions().events.create(session.id, { events: [{ type: 'agent.session.input.tool_approval', id: action.id, approve: true }] });
    const rest = await stream.until(isTurnEnd);
    expect(rest.at(-1).type).toBe('agent.session.turn.completed');
    expect(rest.some((e) => e.type === 'agent.session.in_progress')).toBe(true);
    expect(textOf(rest)).toContain('TOOL-RESULT-SEEN');
    expect(textOf(rest)).not.toContain('was not run');
    await stream.close();
    const after = await sessions().retrieve(session.id);
    expect(after.required_actions).toEqual([]);
    expect(await (await h.svc.api(`/api/approvals/${action.id}`)).json()).toMatchObject({ status: 'approved', decidedBy: `agent-session:${session.id}` });

    // the file was written
    const read = await sessions().stream(session.id, { input: 'CALL_TOOL fs_read {"path":"note.txt"}' });
    const events: any[] = [];
    for await (const e of read) events.push(e);
    expect(textOf(events)).toContain('approved on v1');
  });

  it('tells the model the client denied the call, with its message, and the turn goes on', async () => {
    const { session, stream } = await ask(write('denied on v1'));
    const action = await waitingAction(stream);
    // an id that waits on nothing is refused, and changes nothing
    const unknown = await sessions().events.create(session.id, { events: [{ type: 'agent.session.input.tool_approval', id: 'apr_unknown', approve: true }] }).catch((e: any) => e);
    expect(unknown.status).toBe(400);
    expect(unknown.error.message).toBe('Unknown pending tool approval: apr_unknown');
    await sessions().events.create(session.id, { events: [{ type: 'tool_approval', id: action.id, approve: false, message: 'not that file' }] });
    const rest = await stream.until(isTurnEnd);
    expect(rest.at(-1).type).toBe('agent.session.turn.completed');
    expect(textOf(rest)).toContain('tool fs_write was not run: a person denied it: not that file');
    await stream.close();
    expect((await sessions().retrieve(session.id)).status).toBe('idle');
  });

  it('takes a decision made on /api too: the required action goes and the turn ends', async () => {
    const { session, stream } = await ask(write('approved on api'));
    const action = await waitingAction(stream);
    const { runId } = await (await h.svc.api(`/api/approvals/${action.id}`)).json();
    expect((await h.svc.api(`/api/runs/${runId}/approvals/${action.id}`, { method: 'POST', json: { decision: 'approve' } })).status).toBe(200);
    const rest = await stream.until(isTurnEnd);
    expect(rest.at(-1).type).toBe('agent.session.turn.completed');
    expect(textOf(rest)).toContain('TOOL-RESULT-SEEN');
    await stream.close();
    expect((await sessions().retrieve(session.id)).required_actions).toEqual([]);
    // deciding it again through the session: nothing waits on it any more
    const again = await sessions().events.create(session.id, { events: [{ type: 'agent.session.input.tool_approval', id: action.id, approve: false }] }).catch((e: any) => e);
    expect(again.status).toBe(400);
  });

  describe("a subagent's call", () => {
    const spawn = (task: string) => `CALL_TOOL spawn_subagent ${JSON.stringify({ task, name: 'writer' })}`;
    let multiId: string;
    beforeAll(async () => {
      multiId = (await agents().create({ model: FAKE_MODEL, agent_toolset: toolset, multi_agent: { enabled: true } })).id;
    });
    async function spawned(task: string) {
      const session = await sessions().create({ agent_id: multiId, environment: { type: 'openai_hosted' } });
      const stream = reader<any>(await sessions().events.stream(session.id));
      await sessions().events.create(session.id, { events: [{ type: 'agent.session.input.message', input: [{ role: 'user', content: [{ type: 'input_text', text: spawn(task) }] }] }] });
      const action = await waitingAction(stream);
      return { session, stream, action };
    }
    const isIdle = (e: { type: string }) => e.type === 'agent.session.idle';

    it('is listed in the parent session\'s required_actions with its subagent_id; approved there, the tool runs in the subagent', async () => {
      const { session, stream, action } = await spawned(write('approved for the subagent'));
      expect(action).toEqual({ type: 'tool_approval', id: expect.stringMatching(/^apr_/), tool_name: 'fs_write', arguments: expect.any(String), turn_id: expect.stringMatching(/^turn_/), subagent_id: expect.any(String) });
      expect(JSON.parse(action.arguments)).toEqual({ path: 'note.txt', content: 'approved for the subagent' });
      const waiting = await sessions().retrieve(session.id);
      expect(waiting.status).toBe('requires_action');
      expect(waiting.required_actions).toEqual([action]);
      // the entry names the subagent and its waiting turn
      const [subagent] = (await sessions().subagents.list(session.id)).data;
      expect(action.subagent_id).toBe(subagent.id);
      expect(await sessions().subagents.turns.retrieve(action.turn_id, { session_id: session.id, subagent_id: subagent.id })).toMatchObject({ subagent_id: subagent.id, status: 'waiting' });

      await sessions().events.create(session.id, { events: [{ type: 'tool_approval', id: action.id, approve: true }] });
      const rest = await stream.until(isIdle);
      await stream.close();
      expect(rest.some((e) => e.type === 'agent.session.in_progress')).toBe(true);
      const subText = textOf(rest.filter((e) => e.turn_id === action.turn_id));
      expect(subText).toContain('TOOL-RESULT-SEEN');
      expect(subText).not.toContain('was not run');
      expect(rest.filter((e) => e.type === 'agent.session.turn.completed')).toHaveLength(2);
      expect((await sessions().retrieve(session.id)).required_actions).toEqual([]);
      expect(await (await h.svc.api(`/api/approvals/${action.id}`)).json()).toMatchObject({ status: 'approved', decidedBy: `agent-session:${session.id}` });
      // the subagent wrote the file in the session's environment
      const read = await sessions().stream(session.id, { input: 'CALL_TOOL fs_read {"path":"note.txt"}' });
      const events: any[] = [];
      for await (const e of read) events.push(e);
      expect(textOf(events)).toContain('approved for the subagent');
    });

    it('denied through the parent session, the subagent\'s model reads the reason and its answer reaches the parent', async () => {
      const { session, stream, action } = await spawned(write('denied for the subagent'));
      expect(action.subagent_id).toEqual(expect.any(String));
      await sessions().events.create(session.id, { events: [{ type: 'agent.session.input.tool_approval', id: action.id, approve: false, message: 'subagents write nothing' }] });
      const rest = await stream.until(isIdle);
      await stream.close();
      const denial = 'tool fs_write was not run: a person denied it: subagents write nothing';
      expect(textOf(rest.filter((e) => e.turn_id === action.turn_id))).toContain(denial);
      // the parent turn read the subagent's answer
      const rootTurn = rest.find((e) => e.type === 'agent.session.turn.completed' && e.turn_id !== action.turn_id)!.turn_id;
      expect(textOf(rest.filter((e) => e.turn_id === rootTurn))).toContain(denial);
      const after = await sessions().retrieve(session.id);
      expect(after.status).toBe('idle');
      expect(after.required_actions).toEqual([]);
    });
  });

  it('never runs a disabled tool: the model reads that the policy denied it', async () => {
    const { stream } = await ask(`CALL_TOOL run_command ${JSON.stringify({ command: 'sh', args: ['-c', 'echo ran'] })}`);
    const events = await stream.until(isTurnEnd);
    expect(events.some((e) => e.type === 'agent.session.requires_action')).toBe(false);
    expect(textOf(events)).toContain('tool run_command denied by the permission policy');
    expect(textOf(events)).toContain('(run_command: deny)');
    await stream.close();
  });
});
