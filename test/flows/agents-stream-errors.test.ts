import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAKE_MODEL, rawEvents, reader, startAgentsHarness, type AgentsHarness } from '../support/agents.ts';
import { connect, createTestDatabase } from '../support/pg.ts';

/**
 * A session event stream whose server side fails after its headers went out (here: the event log can no longer be
 * read, its table's SELECT privilege revoked by the superuser) ends with one `error` event, which the `openai`
 * 7.15.0 SDK throws, instead of just ending (a client would take that for a finished stream).
 */
describe('a /v1 event stream that fails on the server', () => {
  let h: AgentsHarness;
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let admin: ReturnType<typeof connect>;

  beforeAll(async () => {
    db = await createTestDatabase();
    admin = connect(db.adminUrl, { max: 1 });
    // keep-alive ticks are when a subscription reads the log: short, so the failure shows at once
    h = await startAgentsHarness({ SVC_SSE_KEEPALIVE_MS: '100' }, { databaseUrl: db.url });
  });
  afterAll(async () => {
    await h?.stop();
    await admin?.end({ timeout: 1 });
    await db?.drop();
  });

  const grant = (on: boolean) => admin.unsafe(on ? 'GRANT SELECT ON agent_session_events TO svc_test_app' : 'REVOKE SELECT ON agent_session_events FROM svc_test_app');

  it('ends with an error event the SDK throws, naming how to resume', async () => {
    const agent = await h.client.beta.agents.create({ model: FAKE_MODEL });
    const session = await h.client.beta.agents.sessions.create({ agent_id: agent.id, environment: { type: 'none' } });
    const raw = rawEvents(h, session.id);
    const stream = reader(await h.client.beta.agents.sessions.events.stream(session.id));
    await h.client.beta.agents.sessions.events.create(session.id, {
      events: [{ type: 'agent.session.input.message', input: [{ role: 'user', content: [{ type: 'input_text', text: 'hello' }] }] }],
    });
    const seen = await stream.until((e) => e.type === 'agent.session.idle');
    expect(seen.at(-1)!.type).toBe('agent.session.idle');
    const lastId = (seen.at(-1) as { event_id: string }).event_id;
    await raw.until((f) => f.data.type === 'agent.session.idle');

    await grant(false);
    try {
      const failure = await stream.until(() => false).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(failure).toBeInstanceOf(OpenAI.APIError);
      expect((failure as InstanceType<typeof OpenAI.APIError>).message).toContain(`the session's event stream failed on the server; reconnect with Last-Event-ID: ${lastId} to resume`);

      // on the wire: exactly one `error` frame, last, with no `id:` (a reconnecting client keeps its last real id)
      const error = await raw.until((f) => f.event === 'error');
      expect(error.id).toBeUndefined();
      expect(error.data).toEqual({
        event_id: expect.stringMatching(/^evt_error_/),
        type: 'error',
        session_id: session.id,
        error: { code: 'server_error', message: expect.stringContaining('failed on the server'), param: null, type: 'server_error' },
      });
      await raw.close();
      expect(raw.frames.filter((f) => f.event === 'error')).toHaveLength(1);
      expect(raw.frames.at(-1)).toBe(error);
    } finally {
      await grant(true);
    }

    // the log is readable again: a reconnect with the last id resumes (nothing was lost, nothing new)
    const resumed = rawEvents(h, session.id, { 'last-event-id': lastId });
    expect((await resumed.response).status).toBe(200);
    await resumed.close();
  });
});
