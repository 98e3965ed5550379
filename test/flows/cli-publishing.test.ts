import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgentsHarness, type AgentsHarness } from '../support/agents.ts';
import { spawn } from 'node:child_process';
import { cli, spawnCli, tempDir } from '../support/cli.ts';
import { modelRequests } from '../support/fake-provider.ts';
import { NODE, SVC_BIN } from '../support/process.ts';

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
    const pub = await cli(['publish', 'cli_bot', '--rate-limit-rpm', '30'], env);
    expect(pub.code, pub.stderr).toBe(0);
    expect(pub.stdout).toContain('rate limit (rpm): 30\n');
    expect(pub.stdout).toContain(`url: ${h.svc.url}/chat/cli-bot (POST, with an agent key: svc agent-keys create cli_bot --label <what for>)`);

    const unlabelled = await cli(['agent-keys', 'create', 'cli_bot'], env);
    expect(unlabelled.code).toBe(2);
    expect(unlabelled.stderr).toContain('--label is required (what the key is for, shown in lists, e.g. website)');
    expect(unlabelled.stderr).toContain('usage: svc agent-keys create [OPTIONS] <PROFILE> --label=<label>');

    const created = await cli(['agent-keys', 'create', 'cli_bot', '--label', 'terminal', '--json'], env);
    expect(created.code, created.stderr).toBe(0);
    const { id, token } = created.json<{ id: string; token: string }>();
    expect(token).toMatch(/^pk_/);

    const said = await cli(['chat', 'cli-bot', 'hello from the terminal', '--key', token], env);
    expect(said.code, said.stderr).toBe(0);
    expect(said.stdout).toBe('FAKE-REPLY: hello from the terminal\n');
    // the profile's name finds its slug (with the API key of the context)
    const byName = await cli(['chat', 'cli_bot', 'by name', '--key', token], env);
    expect(byName.stdout, byName.stderr).toBe('FAKE-REPLY: by name\n');

    const listed = await cli(['agent-keys', 'list', 'cli_bot'], env);
    expect(listed.stdout).toContain(id);
    expect(listed.stdout).not.toContain(token);

    expect((await cli(['agent-keys', 'revoke', 'cli_bot', 'terminal'], env)).stdout).toBe(`revoked ${id}\n`);
    const refused = await cli(['chat', 'cli-bot', 'still there?', '--key', token], env);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toMatch(/401 agent key revoked/);

    expect((await cli(['unpublish', 'cli_bot'], env)).code).toBe(0);
    expect((await h.svc.api('/api/profiles/cli_bot/published')).status).toBe(404);
  });

  it("says when the reply waits on the owner's approval of a call, and when it goes on", async () => {
    const profile = { name: 'owner_bot', runtime: 'general', model: 'openai-compatible:gpt-4o', tools: ['@files'], permissions: { fs_write: 'ask' } };
    expect((await h.svc.api('/api/profiles', { method: 'POST', json: profile })).status).toBe(201);
    expect((await cli(['publish', 'owner_bot', '--approvals', 'owner'], env)).code).toBe(0);
    const { token } = (await cli(['agent-keys', 'create', 'owner_bot', '--label', 'terminal', '--json'], env)).json<{ token: string }>();
    const ask = (content: string) => spawnCli(['chat', 'owner-bot', `CALL_TOOL fs_write {"path":"/work/note.txt","content":"${content}"}`, '--key', token], env);
    const decide = async (decision: object) => {
      const pending = (await (await h.svc.api('/api/approvals?status=pending')).json()) as Array<{ id: string; runId: string; toolName: string }>;
      expect(pending.map((a) => a.toolName)).toEqual(['fs_write']);
      const { runId, id } = pending[0]!;
      expect((await h.svc.api(`/api/runs/${runId}/approvals/${id}`, { method: 'POST', json: decision })).status).toBe(200);
    };

    const approved = ask('approved');
    await approved.waitFor('stderr', /^waiting for the agent's owner to approve a call to fs_write \(until \d{4}-\d\d-\d\d \d\d:\d\d UTC\)…\n/m);
    await decide({ decision: 'approve' });
    expect((await approved.exited).code, approved.stderr()).toBe(0);
    expect(approved.stderr()).toContain("…\n  approved by the owner: fs_write runs and the reply goes on\n");
    // stdout holds the reply alone: the model saw the written file
    expect(approved.stdout()).toMatch(/^TOOL-RESULT-SEEN: \{[^…]*"created": true\n\}\n$/);

    const denied = ask('denied');
    await denied.waitFor('stderr', /approve a call to fs_write/);
    await decide({ decision: 'deny', message: 'not from a terminal' });
    expect((await denied.exited).code, denied.stderr()).toBe(0);
    expect(denied.stderr()).toContain('  not approved by the owner: the reply goes on without fs_write\n');
    expect(denied.stdout()).toContain('not from a terminal');

    // --json: one JSON line per event, the waiting and resumed ones among them
    const json = spawnCli(['chat', 'owner-bot', 'CALL_TOOL fs_write {"path":"/work/note.txt","content":"json"}', '--key', token, '--json'], env);
    await json.waitFor('stdout', /"event":"waiting"/);
    await decide({ decision: 'approve' });
    expect((await json.exited).code, json.stderr()).toBe(0);
    const events = json.stdout().split('\n').filter(Boolean).map((l) => JSON.parse(l) as { event: string; toolName?: string; decision?: string });
    expect(events.filter((e) => e.event === 'waiting' || e.event === 'resumed')).toMatchObject([
      { event: 'waiting', toolName: 'fs_write' },
      { event: 'resumed', decision: 'approve' },
    ]);
    expect(events.at(-1)!.event).toBe('done');
    expect(json.stderr()).toBe('');
  });

  it('is a REPL without a message: each line a turn of one conversation, until stdin ends', async () => {
    expect((await h.svc.api('/api/profiles', { method: 'POST', json: { name: 'repl_bot', runtime: 'general', model: 'openai-compatible:gpt-4o' } })).status).toBe(201);
    const pub = await cli(['publish', 'repl_bot', '--approvals', 'owner', '--json'], env);
    expect(pub.json()).toMatchObject({ slug: 'repl-bot', visibility: 'private', approvals: 'owner', url: `${h.svc.url}/chat/repl-bot` });
    const { token } = (await cli(['agent-keys', 'create', 'repl_bot', '--label', 'repl', '--json'], env)).json<{ token: string }>();

    const child = spawn(NODE, [SVC_BIN, 'chat', 'repl-bot'], { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env, SVC_AGENT_KEY: token }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const waiters = new Set<() => void>();
    child.stdout.on('data', (d) => ((stdout += d), waiters.forEach((w) => w())));
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    const printed = (text: string) =>
      new Promise<void>((resolve) => {
        const check = () => stdout.includes(text) && (waiters.delete(check), resolve());
        waiters.add(check);
        check();
      });

    child.stdin.write('the password is quince\n');
    await printed('FAKE-REPLY: the password is quince\n');
    child.stdin.end('what was the password?\n');
    expect(await exited, stderr).toBe(0);
    expect(stdout).toBe('FAKE-REPLY: the password is quince\nFAKE-REPLY: what was the password?\n');
    // one conversation: the second turn's model request carries the first
    const second = modelRequests(h.fake).filter((r) => JSON.stringify(r.body).includes('what was the password?')).at(-1)!;
    expect(JSON.stringify(second.body)).toContain('the password is quince');
  });

  it('at a terminal, prompts for each message and says how to leave; /exit leaves', async () => {
    const { token } = (await cli(['agent-keys', 'create', 'repl_bot', '--label', 'tty', '--json'], env)).json<{ token: string }>();
    // util-linux `script` gives the client a terminal, as a person's shell would
    const command = [NODE, SVC_BIN, 'chat', 'repl-bot'].map((a) => `'${a}'`).join(' ');
    const child = spawn('script', ['-qfec', command, '/dev/null'], { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', TERM: 'dumb', ...env, SVC_AGENT_KEY: token }, stdio: ['pipe', 'pipe', 'pipe'] });
    let screen = '';
    const waiters = new Set<() => void>();
    child.stdout.on('data', (d) => ((screen += d), waiters.forEach((w) => w())));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    const shows = (pattern: RegExp) =>
      new Promise<void>((resolve) => {
        const check = () => pattern.test(screen) && (waiters.delete(check), resolve());
        waiters.add(check);
        check();
      });
    await shows(/Ctrl-D or \/exit leaves[\s\S]*you> /);
    child.stdin.write('hi there\r');
    await shows(/FAKE-REPLY: hi there[\s\S]*you> /);
    child.stdin.write('/exit\r');
    expect(await exited, screen).toBe(0);
  });
});
