import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgentsHarness, type AgentsHarness } from '../support/agents.ts';
import { cli, tempDir } from '../support/cli.ts';

/** `svc publish`, `svc agent-keys create|list|revoke`, `svc chat` and `svc unpublish` against a real server. */
describe('svc publish, agent-keys, chat, unpublish', () => {
  let h: AgentsHarness;
  let env: Record<string, string>;
  beforeAll(async () => {
    h = await startAgentsHarness();
    env = { SVC_CONFIG_DIR: tempDir(), SVC_API_URL: h.svc.url, SVC_API_KEY: h.svc.key };
    expect((await h.svc.api('/api/profiles', { method: 'POST', json: { name: 'cli_bot', runtime: 'general', model: 'openai-compatible:gpt-4o' } })).status).toBe(201);
  }, 60_000);
  afterAll(async () => {
    await h?.stop();
  });

  it('publishes, mints a key, chats with it, revokes it and unpublishes', async () => {
    const pub = await cli(['publish', 'cli_bot', '--rate-limit-rpm', '30', '--json'], env);
    expect(pub.code, pub.stderr).toBe(0);
    expect(pub.json()).toMatchObject({ slug: 'cli-bot', rateLimitRpm: 30, visibility: 'private' });

    const created = await cli(['agent-keys', 'create', 'cli_bot', '--label', 'terminal', '--json'], env);
    expect(created.code, created.stderr).toBe(0);
    const { id, token } = created.json<{ id: string; token: string }>();
    expect(token).toMatch(/^pk_/);

    const said = await cli(['chat', 'cli-bot', 'hello from the terminal', '--key', token], env);
    expect(said.code, said.stderr).toBe(0);
    expect(said.stdout).toBe('FAKE-REPLY: hello from the terminal\n');

    const listed = await cli(['agent-keys', 'list', 'cli_bot'], env);
    expect(listed.stdout).toContain(id);
    expect(listed.stdout).not.toContain(token);

    expect((await cli(['agent-keys', 'revoke', 'cli_bot', id], env)).code).toBe(0);
    const refused = await cli(['chat', 'cli-bot', 'still there?', '--key', token], env);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toMatch(/401 agent key revoked/);

    expect((await cli(['unpublish', 'cli_bot'], env)).code).toBe(0);
    expect((await h.svc.api('/api/profiles/cli_bot/published')).status).toBe(404);
  });
});
