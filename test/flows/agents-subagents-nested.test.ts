import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect, FAKE_MODEL, startAgentsHarness, textOf, type AgentsHarness } from '../support/agents.ts';
import { lastInput, modelRequests } from '../support/fake-provider.ts';

/**
 * What subagents share with the session they work for, driven by the `openai` 7.15.0 package and its stream helper:
 * the agent's function tools (a subagent's call is announced in its own turn and answered by the client's handler),
 * subagents of their own down to the nesting depth svc allows (3), and, in a hosted environment, the session's sandbox.
 */
type Ev = { type: string; turn_id?: string | null; [key: string]: any };

/**
 * A prompt line the fake provider answers with a `spawn_subagent` call whose task is `task`. CALL_TOOL inside the task
 * is spelled \u0043ALL_TOOL in the JSON, so only the outermost line is a directive here; the subagent's prompt (the
 * parsed task) then carries the next one.
 */
const spawnLine = (task: string) => `CALL_TOOL spawn_subagent ${JSON.stringify({ task }).replaceAll('CALL_TOOL', '\\u0043ALL_TOOL')}`;
const toolLine = (name: string, args: object) => `CALL_TOOL ${name} ${JSON.stringify(args)}`;

describe('subagents with function tools, nesting and a shared sandbox', () => {
  let h: AgentsHarness;
  beforeAll(async () => {
    h = await startAgentsHarness();
  });
  afterAll(() => h?.stop());
  const sessions = () => h.client.beta.agents.sessions;

  it("reach the agent's function tools: a subagent's call is announced in its turn and answered by the client's handler", async () => {
    const agent = await h.client.beta.agents.create({
      model: FAKE_MODEL,
      multi_agent: { enabled: true },
      tools: [{ type: 'function', name: 'lookup', description: 'Weather of a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }],
    });
    const session = await sessions().create({ agent_id: agent.id, environment: { type: 'none' } });
    const handled: unknown[] = [];
    const events = (await collect(
      sessions().stream(session.id, { input: spawnLine(toolLine('lookup', { city: 'Oslo' })), toolHandlers: { lookup: (args) => (handled.push(args), 'Oslo: 12 C, rain') } }),
    )) as unknown as Ev[];
    expect(events.at(-1)!.type).toBe('agent.session.idle');
    expect(handled).toEqual([{ city: 'Oslo' }]);

    const subTurn = events.find((e) => e.type === 'agent.session.turn.created' && e.turn.subagent_id !== null)!;
    const rootTurn = events.find((e) => e.type === 'agent.session.turn.created' && e.turn.subagent_id === null)!;
    // the call and its answer are items of the subagent's turn; the session waited on it meanwhile
    const call = events.find((e) => e.type === 'agent.session.turn.item.added' && e.item.type === 'function_call')!;
    expect(call.turn_id).toBe(subTurn.turn_id);
    expect(call.item).toMatchObject({ name: 'lookup', turn_id: subTurn.turn_id });
    const waiting = events.find((e) => e.type === 'agent.session.requires_action')!;
    expect(waiting.session.required_actions).toEqual([{ type: 'function_call', name: 'lookup', call_id: call.item.call_id, arguments: call.item.arguments, turn_id: subTurn.turn_id }]);
    const output = events.find((e) => e.type === 'agent.session.turn.item.added' && e.item.type === 'function_call_output')!;
    expect(output).toMatchObject({ turn_id: subTurn.turn_id, item: { call_id: call.item.call_id, output: 'Oslo: 12 C, rain', status: 'completed' } });
    // the subagent's model read the answer, and its answer is the parent's tool output
    expect(textOf(events.filter((e) => e.turn_id === subTurn.turn_id) as never)).toBe('TOOL-RESULT-SEEN: Oslo: 12 C, rain');
    const subId: string = subTurn.turn.subagent_id;
    expect(textOf(events.filter((e) => e.turn_id === rootTurn.turn_id) as never)).toBe(`TOOL-RESULT-SEEN: ${JSON.stringify({ subagent_id: subId, output: 'TOOL-RESULT-SEEN: Oslo: 12 C, rain' })}`);
    expect(JSON.stringify(events)).not.toContain('NoSuchTool');
    // stored as the subagent's items, not the session's
    const subItems = await sessions().subagents.items.list(subId, { session_id: session.id, order: 'asc' });
    expect(subItems.data.map((i) => i.type)).toEqual(['message', 'function_call', 'function_call_output', 'message']);
    expect((await sessions().items.list(session.id, { order: 'asc' })).data.map((i) => i.type)).toEqual(['message', 'create_subagent_call', 'agent_message', 'message']);
    expect((await sessions().retrieve(session.id)).status).toBe('idle');
  });

  it('nest three deep with one running at a time: each waiting parent gives its place up, and the deepest is offered no subagent tools', async () => {
    const agent = await h.client.beta.agents.create({ model: FAKE_MODEL, multi_agent: { enabled: true, max_concurrent_subagents: 1 } });
    const session = await sessions().create({ agent_id: agent.id, environment: { type: 'none' } });
    const before = modelRequests(h.fake).length;
    const events = (await collect(sessions().stream(session.id, { input: spawnLine(spawnLine(spawnLine('the deepest task'))) }))) as unknown as Ev[];
    expect(events.at(-2)!.type).toBe('agent.session.turn.completed');

    const subs = (await sessions().subagents.list(session.id, { order: 'asc' })).data;
    expect(subs).toHaveLength(3);
    // each the child of the one before; all closed
    expect(subs.map((s) => s.parent_agent_id)).toEqual([agent.id, subs[0].id, subs[1].id]);
    expect(subs.map((s) => s.status)).toEqual(['closed', 'closed', 'closed']);
    // the answer climbed back up through every level
    const turns = events.filter((e) => e.type === 'agent.session.turn.created');
    const turnOf = (subId: string | null) => turns.find((e) => e.turn.subagent_id === subId)!.turn_id;
    const answer3 = 'FAKE-REPLY: the deepest task';
    expect(textOf(events.filter((e) => e.turn_id === turnOf(subs[2].id)) as never)).toBe(answer3);
    const answer2 = `TOOL-RESULT-SEEN: ${JSON.stringify({ subagent_id: subs[2].id, output: answer3 })}`;
    expect(textOf(events.filter((e) => e.turn_id === turnOf(subs[1].id)) as never)).toBe(answer2);
    const answer1 = `TOOL-RESULT-SEEN: ${JSON.stringify({ subagent_id: subs[1].id, output: answer2 })}`;
    expect(textOf(events.filter((e) => e.turn_id === turnOf(subs[0].id)) as never)).toBe(answer1);
    expect(textOf(events.filter((e) => e.turn_id === turnOf(null)) as never)).toBe(`TOOL-RESULT-SEEN: ${JSON.stringify({ subagent_id: subs[0].id, output: answer1 })}`);
    // each subagent's spawn call is an item of its own turn, its child's answer an agent_message to it
    const sub1Items = (await sessions().subagents.items.list(subs[0].id, { session_id: session.id, order: 'asc' })).data;
    expect(sub1Items.map((i) => i.type)).toEqual(['message', 'create_subagent_call', 'agent_message', 'message']);
    expect(sub1Items[2]).toMatchObject({ sender_agent_id: subs[1].id, recipient_agent_id: subs[0].id });

    // the subagent tools were offered down to depth 2, not to the depth-3 subagent
    const requests = modelRequests(h.fake).slice(before);
    const toolsOf = (prompt: string) => {
      const request = requests.find((r) => lastInput('chat', r.body)?.kind === 'user' && lastInput('chat', r.body)?.text === prompt);
      expect(request, prompt).toBeDefined();
      return JSON.stringify(request!.body.tools ?? []);
    };
    expect(toolsOf(spawnLine('the deepest task'))).toContain('spawn_subagent');
    expect(toolsOf('the deepest task')).not.toContain('spawn_subagent');
  });

  it("work in the session's sandbox in a hosted environment: its files, its env, and what they leave behind", async () => {
    const agent = await h.client.beta.agents.create({ model: FAKE_MODEL, multi_agent: { enabled: true } });
    const session = await sessions().create({
      agent_id: agent.id,
      environment: { type: 'openai_hosted', env: { TEAM: 'blue' }, files: [{ type: 'inline', path: '/workspace/brief.md', data: Buffer.from('the brief').toString('base64') }] },
    });
    const script = 'cat brief.md && echo " for team $TEAM" && echo written by the subagent > from-sub.txt';
    const first = (await collect(sessions().stream(session.id, { input: spawnLine(toolLine('run_command', { command: 'sh', args: ['-c', script] })) }))) as unknown as Ev[];
    const subTurn = first.find((e) => e.type === 'agent.session.turn.created' && e.turn.subagent_id !== null)!;
    expect(textOf(first.filter((e) => e.turn_id === subTurn.turn_id) as never)).toBe('TOOL-RESULT-SEEN: the brief for team blue\n');
    // the parent sees what the subagent wrote, and it is an artifact of the session
    const second = (await collect(sessions().stream(session.id, { input: toolLine('fs_read', { path: 'from-sub.txt' }) }))) as unknown as Ev[];
    expect(textOf(second as never)).toBe('TOOL-RESULT-SEEN: written by the subagent\n');
    expect((await sessions().artifacts.list(session.id)).data.map((a) => a.path)).toEqual(['/workspace/from-sub.txt']);
  });
});
