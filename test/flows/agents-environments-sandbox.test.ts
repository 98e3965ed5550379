import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends, startOn } from '../support/backends.ts';
import { collect, FAKE_MODEL, startAgentsHarness, textOf, type AgentsHarness } from '../support/agents.ts';

/**
 * A hosted environment is a sandbox on the runner's process substrate: the session's profile gets the file tools and
 * `run_command` in `/work`, the environment's workspace files are there before the first turn, and the files a turn
 * leaves behind become session artifacts (listed, retrieved, downloaded byte for byte, deleted without touching the
 * live file) — all through the real `openai` 7.15.0 package.
 */
describe.each(backends)('sandboxed environments and session artifacts on $name', (backend) => {
  let h: AgentsHarness;
  beforeAll(async () => {
    h = await startOn(backend, (url) => startAgentsHarness({}, { databaseUrl: url }));
  });
  afterAll(() => h?.stop());

  const b64 = (bytes: Uint8Array | string) => Buffer.from(bytes).toString('base64');
  const BINARY = new Uint8Array([0, 255, 1, 254, 0x80, 0x81, 10, 13, 0]);
  const sessions = () => h.client.beta.agents.sessions;
  const turn = async (sessionId: string, input: string) => {
    const events = await collect(sessions().stream(sessionId, { input }));
    expect(events.at(-2)!.type).toBe('agent.session.turn.completed');
    return { text: textOf(events), turnId: (events.at(-2) as { turn_id: string }).turn_id };
  };
  const command = (script: string) => `CALL_TOOL run_command ${JSON.stringify({ command: 'sh', args: ['-c', script] })}`;

  it('seeds the workspace, runs commands, and publishes the files a turn leaves as artifacts', async () => {
    const agent = await h.client.beta.agents.create({ model: FAKE_MODEL });
    const session = await sessions().create({
      agent_id: agent.id,
      environment: {
        type: 'openai_hosted',
        files: [
          { type: 'inline', path: '/workspace/notes.md', data: b64('seeded notes') },
          { type: 'inline', path: '/workspace/data/blob.bin', data: b64(BINARY) },
        ],
      },
    });
    const environmentId = (session.environment as { id: string }).id;

    // the seeded text file is readable by the model; seeded inputs are not artifacts
    expect((await turn(session.id, 'CALL_TOOL fs_read {"path":"notes.md"}')).text).toBe('TOOL-RESULT-SEEN: seeded notes');
    expect((await sessions().artifacts.list(session.id)).data).toEqual([]);

    // a command writes a new file and copies the binary input byte for byte
    const { turnId } = await turn(session.id, command('echo hi > out.txt && cp data/blob.bin copy.bin'));
    const page = await sessions().artifacts.list(session.id, { order: 'asc' });
    const byPath = Object.fromEntries(page.data.map((a) => [a.path, a]));
    expect(Object.keys(byPath).sort()).toEqual(['/workspace/copy.bin', '/workspace/out.txt']);
    const out = byPath['/workspace/out.txt'];
    expect(out).toEqual({
      id: expect.any(String),
      created_at: expect.any(Number),
      environment_id: environmentId,
      object: 'agent.session.artifact',
      path: '/workspace/out.txt',
      session_id: session.id,
      size_bytes: 3,
      turn_id: turnId,
    });
    expect(await sessions().artifacts.retrieve(out.id, { session_id: session.id })).toEqual(out);
    const content = await sessions().artifacts.content(out.id, { session_id: session.id });
    expect(content.headers.get('content-type')).toBe('application/octet-stream');
    expect(await content.text()).toBe('hi\n');
    const copy = await sessions().artifacts.content(byPath['/workspace/copy.bin'].id, { session_id: session.id });
    expect(new Uint8Array(await copy.arrayBuffer())).toEqual(BINARY);

    // filters and paging
    expect((await sessions().artifacts.list(session.id, { environment_id: 'env_other' })).data).toEqual([]);
    expect((await sessions().artifacts.list(session.id, { environment_id: environmentId })).data).toHaveLength(2);
    const first = await sessions().artifacts.list(session.id, { limit: 1 });
    expect(first.has_more).toBe(true);
    const second = await sessions().artifacts.list(session.id, { limit: 1, after: first.data[0].id });
    expect(second.data.map((a) => a.id)).not.toContain(first.data[0].id);

    // deleting removes the artifact, not the live workspace file, and the unchanged file is not published again
    expect(await sessions().artifacts.delete(out.id, { session_id: session.id })).toEqual({ id: out.id, deleted: true, object: 'agent.session.artifact.deleted' });
    await expect(sessions().artifacts.retrieve(out.id, { session_id: session.id })).rejects.toMatchObject({ status: 404 });
    await expect(sessions().artifacts.content(out.id, { session_id: session.id })).rejects.toMatchObject({ status: 404 });
    expect((await turn(session.id, 'CALL_TOOL fs_read {"path":"out.txt"}')).text).toBe('TOOL-RESULT-SEEN: hi\n');
    expect((await sessions().artifacts.list(session.id)).data.map((a) => a.path)).toEqual(['/workspace/copy.bin']);

    // a changed file is a new artifact of the turn that changed it
    const changed = await turn(session.id, command('echo bye > out.txt'));
    const latest = (await sessions().artifacts.list(session.id)).data[0];
    expect(latest).toMatchObject({ path: '/workspace/out.txt', size_bytes: 4, turn_id: changed.turnId });
    expect(await (await sessions().artifacts.content(latest.id, { session_id: session.id })).text()).toBe('bye\n');
  });

  it('writes files added after the session was created into its sandbox before the next turn, accepting them while the environment is pending', async () => {
    const agent = await h.client.beta.agents.create({ model: FAKE_MODEL });
    // a setup command keeps the environment pending until the first turn; it reads a file added meanwhile
    const session = await sessions().create({ agent_id: agent.id, environment: { type: 'openai_hosted', setup_commands: [{ command: 'cp early.txt copied-by-setup.txt' }] } });
    const environmentId = (session.environment as { id: string }).id;
    const files = h.client.beta.agents.environments.files;
    expect((await h.client.beta.agents.environments.retrieve(environmentId)).status).toBe('pending');
    expect(await files.create(environmentId, { type: 'inline', path: '/workspace/early.txt', data: b64('added while pending') })).toEqual({
      environment_id: environmentId,
      object: 'agent.environment.file',
      path: '/workspace/early.txt',
      size_bytes: 19,
    });
    await files.create(environmentId, { type: 'inline', path: '/workspace/data/blob.bin', data: b64(BINARY) });
    expect((await turn(session.id, command('cat copied-by-setup.txt && od -An -tx1 data/blob.bin'))).text).toBe('TOOL-RESULT-SEEN: added while pending 00 ff 01 fe 80 81 0a 0d 00\n');
    expect((await h.client.beta.agents.environments.retrieve(environmentId)).status).toBe('connected');

    // added (and replaced) between turns: there at the next one; environment files are inputs, not artifacts
    await files.create(environmentId, { type: 'inline', path: '/workspace/early.txt', data: b64('replaced') });
    await files.create(environmentId, { type: 'inline', path: '/workspace/later/notes.md', data: b64('added between turns') });
    expect((await turn(session.id, command('cat early.txt; echo; cat later/notes.md'))).text).toBe('TOOL-RESULT-SEEN: replaced\nadded between turns');
    expect((await sessions().artifacts.list(session.id)).data.map((a) => a.path)).toEqual(['/workspace/copied-by-setup.txt']);
  });

  it("reads artifacts back byte for byte whatever the environment's output limit, which still cuts what commands print", async () => {
    const agent = await h.client.beta.agents.create({ model: FAKE_MODEL });
    // bytes of every value, far larger than the 1024 bytes a command's output keeps
    const input = new Uint8Array(150_000).map((_, i) => (i * 7919 + (i >> 8)) & 0xff);
    // `config` is svc's own field of the environment (the SDK's type does not know it)
    const environment = { type: 'openai_hosted' as const, files: [{ type: 'inline' as const, path: '/workspace/in.bin', data: b64(input) }], config: { limits: { output_bytes: 1024 } } };
    const session = await sessions().create({ agent_id: agent.id, environment });
    // the agent's commands keep 1024 bytes of their output
    const flood = await turn(session.id, command('head -c 5000 /dev/zero | tr "\\0" a'));
    expect(flood.text).toBe(`TOOL-RESULT-SEEN: ${'a'.repeat(1024)}\n[output truncated at 1024 bytes]`);
    // a copy, and a file past what one read of the sandbox returns (1 MiB): both published whole
    await turn(session.id, command('cp in.bin copy.bin && for i in 1 2 3 4 5 6 7 8; do cat in.bin; done > big.bin'));
    const artifacts = (await sessions().artifacts.list(session.id)).data;
    expect(artifacts.map((a) => [a.path, a.size_bytes]).sort()).toEqual([
      ['/workspace/big.bin', 8 * input.byteLength],
      ['/workspace/copy.bin', input.byteLength],
    ]);
    const bytes = async (path: string) => new Uint8Array(await (await sessions().artifacts.content(artifacts.find((a) => a.path === path)!.id, { session_id: session.id })).arrayBuffer());
    expect(Buffer.from(await bytes('/workspace/copy.bin')).equals(Buffer.from(input))).toBe(true);
    expect(Buffer.from(await bytes('/workspace/big.bin')).equals(Buffer.concat(Array(8).fill(Buffer.from(input))))).toBe(true);
  });

  it('gives sessions without an environment no tools and no artifacts', async () => {
    const agent = await h.client.beta.agents.create({ model: FAKE_MODEL });
    const session = await sessions().create({ agent_id: agent.id, environment: { type: 'none' } });
    const events = await collect(sessions().stream(session.id, { input: 'CALL_TOOL fs_write {"path":"x.txt","content":"nope"}' }));
    expect(textOf(events)).toContain("unavailable tool 'fs_write'");
    expect((await sessions().artifacts.list(session.id)).data).toEqual([]);
    await expect(sessions().artifacts.retrieve('artifact_missing', { session_id: session.id })).rejects.toMatchObject({ status: 404 });
  });
});
