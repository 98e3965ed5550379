import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgentsHarness, type AgentsHarness } from '../support/agents.ts';
import { cli, tempDir } from '../support/cli.ts';

/**
 * A `/v1` agent session runs on a profile private to it (`agent-session-…`, its agent's configuration), which
 * `svc profiles` does not list. `/api/sessions` marks such sessions `origin: "v1"`, `svc sessions` says what they
 * are instead of naming a profile nobody can find, and the prefix cannot be taken by a saved profile.
 */
describe('/v1 agent sessions among /api/sessions', () => {
  let h: AgentsHarness;
  let env: Record<string, string>;
  beforeAll(async () => {
    h = await startAgentsHarness();
    env = { SVC_CONFIG_DIR: tempDir(), SVC_API_URL: h.svc.url, SVC_API_KEY: h.svc.key };
  });
  afterAll(() => h?.stop());

  it('are marked origin v1, listed by svc sessions as /v1 agent sessions, and their profile prefix is reserved', async () => {
    expect((await h.svc.api('/api/profiles', { method: 'POST', json: { name: 'saved', runtime: 'general', model: 'demo:echo' } })).status).toBe(201);
    const run = await (await h.svc.api('/api/runs', { method: 'POST', json: { profile: 'saved', prompt: 'hi' } })).json();
    const agent = await h.client.beta.agents.create({ model: 'svc/demo/echo' });
    const v1 = await h.client.beta.agents.sessions.create({ agent_id: agent.id, environment: { type: 'none' } });

    const sessions = (await (await h.svc.api('/api/sessions')).json()) as Array<{ id: string; profile: string; origin: string }>;
    expect(sessions.find((s) => s.id === v1.id)).toMatchObject({ origin: 'v1', profile: expect.stringMatching(/^agent-session-/) });
    expect(sessions.find((s) => s.id === run.sessionId)).toMatchObject({ origin: 'api', profile: 'saved' });
    expect(await (await h.svc.api(`/api/sessions/${v1.id}`)).json()).toMatchObject({ id: v1.id, origin: 'v1' });

    const listed = await cli(['sessions'], env);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(new RegExp(`^${v1.id}\\t\\(/v1 agent session\\)\\t`, 'm'));
    expect(listed.stdout).toMatch(new RegExp(`^${run.sessionId}\\tsaved\\t`, 'm'));
    const profiles = await cli(['profiles'], env);
    expect(profiles.stdout).toContain('saved');
    expect(profiles.stdout).not.toContain('agent-session-');

    const taken = await h.svc.api('/api/profiles', { method: 'POST', json: { name: 'agent-session-mine', runtime: 'general', model: 'demo:echo' } });
    expect(taken.status).toBe(400);
    expect((await taken.json()).error).toMatch(/^name: the prefix agent-session- is reserved/);
  });
});
