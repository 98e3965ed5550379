import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAKE_MODEL, isTurnEnd, reader, startAgentsHarness, textOf, type AgentsHarness } from '../support/agents.ts';

/**
 * How long a client-executed function call may wait for its `tool_result`: the turn's deadline
 * (SVC_AGENT_TURN_DEADLINE_MS, 1 h by default; 2 s here), not the 5 minutes after which the worker's HTTP call to the
 * function-tool endpoint used to be cut by fetch's own timeouts (that call now carries the deadline as its timeout).
 * Past the deadline the call is recorded as failed, the model is told, and the turn goes on to its end.
 */
describe('a function call and the turn deadline', () => {
  let h: AgentsHarness;
  beforeAll(async () => {
    h = await startAgentsHarness({ SVC_AGENT_TURN_DEADLINE_MS: '2000' });
  });
  afterAll(() => h?.stop());

  const agentWithTool = () =>
    h.client.beta.agents.create({ model: FAKE_MODEL, tools: [{ type: 'function', name: 'approve', description: 'Ask a human', parameters: { type: 'object', properties: {} } }] });

  it('completes the turn with the tool result a client sends while the call waits', async () => {
    const agent = await agentWithTool();
    const session = await h.client.beta.agents.sessions.create({ agent_id: agent.id, environment: { type: 'none' } });
    const stream = reader(await h.client.beta.agents.sessions.events.stream(session.id));
    await h.client.beta.agents.sessions.events.create(session.id, { events: [{ type: 'agent.session.input.message', input: [{ role: 'user', content: [{ type: 'input_text', text: 'CALL_TOOL approve {}' }] }] }] });
    const call = (await stream.until((e: any) => e.type === 'agent.session.turn.item.added' && e.item.type === 'function_call')).at(-1) as any;
    await h.client.beta.agents.sessions.events.create(session.id, { events: [{ type: 'agent.session.input.tool_result', turn_id: call.turn_id, call_id: call.item.call_id, success: true, output: 'approved' }] });
    const rest = await stream.until(isTurnEnd);
    await stream.close();
    expect(rest.at(-1)!.type).toBe('agent.session.turn.completed');
    expect(textOf(rest as never)).toContain('TOOL-RESULT-SEEN: approved');
  });

  it('ends a call left unanswered at the deadline as failed, tells the model, and completes the turn', async () => {
    const agent = await agentWithTool();
    const session = await h.client.beta.agents.sessions.create({ agent_id: agent.id, environment: { type: 'none' } });
    const stream = reader(await h.client.beta.agents.sessions.events.stream(session.id));
    await h.client.beta.agents.sessions.events.create(session.id, { events: [{ type: 'agent.session.input.message', input: [{ role: 'user', content: [{ type: 'input_text', text: 'CALL_TOOL approve {}' }] }] }] });
    const events = (await stream.until(isTurnEnd)) as any[];
    await stream.close();
    const output = events.find((e) => e.type === 'agent.session.turn.item.added' && e.item.type === 'function_call_output');
    expect(output.item).toMatchObject({ status: 'failed', error: "no tool_result arrived within the turn's deadline (2 s)" });
    expect(events.at(-1).type).toBe('agent.session.turn.completed');
    expect(textOf(events)).toContain("TOOL-RESULT-SEEN: no tool_result arrived within the turn's deadline");
    const after = await h.client.beta.agents.sessions.retrieve(session.id);
    expect(after.status).toBe('idle');
    // a late answer is refused: the call is no longer pending
    const late = await h.client.beta.agents.sessions.events
      .create(session.id, { events: [{ type: 'agent.session.input.tool_result', turn_id: output.turn_id, call_id: output.item.call_id, success: true, output: 'too late' }] })
      .catch((e: { status?: number }) => e);
    expect((late as { status?: number }).status).toBe(400);
  });
});
