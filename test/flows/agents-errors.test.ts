import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { startAgentsHarness, type AgentsHarness } from '../support/agents.ts';
import { createTestDatabase } from '../support/pg.ts';

/** Errors of the agents API as a client sees them: an unknown `/v1` path answers the OpenAI error object the `openai` 7.15.0 SDK parses. */
describe('agents API errors', () => {
  let h: AgentsHarness;
  let db: Awaited<ReturnType<typeof createTestDatabase>>;

  beforeAll(async () => {
    db = await createTestDatabase();
    h = await startAgentsHarness({}, { databaseUrl: db.url });
  });
  afterAll(async () => {
    await h?.stop();
    await db?.drop();
  });

  it('answers an unknown /v1 path with the OpenAI error object, which the SDK reads as NotFoundError', async () => {
    const res = await h.svc.api('/v1/no-such-resource/abc');
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: { message: 'Unknown route: GET /v1/no-such-resource/abc', type: 'not_found_error', param: null, code: null } });

    const err = (await h.client.get('/no-such-resource').catch((e: unknown) => e)) as InstanceType<typeof OpenAI.NotFoundError>;
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect(err.message).toContain('Unknown route: GET /v1/no-such-resource');
    expect(err.error).toMatchObject({ type: 'not_found_error' });
  });

  it('answers a known /v1 path with an unsupported method with the OpenAI error object', async () => {
    const res = await h.svc.api('/v1/agents', { method: 'PUT', json: {} });
    expect(res.status).toBe(404);
    expect((await res.json()).error).toMatchObject({ message: 'Unknown route: PUT /v1/agents', type: 'not_found_error' });
  });
});
