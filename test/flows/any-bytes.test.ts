import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect, FAKE_MODEL, rawEvents, startAgentsHarness, type AgentsHarness } from '../support/agents.ts';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.ts';
import { followSse, readSse, type SseFrame } from '../support/sse.ts';
import { keyOf, startOperatorSvc } from '../support/tenants.ts';
import type { TestSvc } from '../support/svc.ts';

/**
 * Whatever an agent's command prints (a NUL, random bytes, a NUL-separated /proc file) or a client sends (a prompt
 * with a NUL and a lone surrogate) is stored: the run ends with its result, and the stream replayed after the fact is
 * the stream shown live, frame for frame. Plain runs of another tenant, written by the same event-log flushes, are
 * untouched. Commands run in the real sandbox; the model is the fake provider, asked to call `run_command`.
 */
const command = (script: string) => `CALL_TOOL run_command ${JSON.stringify({ command: 'sh', args: ['-c', script] })}`;
const NASTY = {
  "printf 'a\\000b'": "printf 'a\\000b'",
  'head -c 4096 /dev/urandom': 'head -c 4096 /dev/urandom',
  'cat /proc/self/environ': 'cat /proc/self/environ',
};

describe('a run whose command prints any bytes', () => {
  let svc: TestSvc;
  let fake: FakeProvider;
  let otherKey: string;
  beforeAll(async () => {
    fake = await startFakeProvider();
    // a short write retry: on a log that refuses the events, the run ends in well under a test's time
    svc = await startOperatorSvc({ OPENAI_COMPATIBLE_BASE_URL: fake.url, OPENAI_COMPATIBLE_API_KEY: 'x', SVC_RUN_WRITE_RETRY_MS: '600' });
    otherKey = await keyOf(svc, 'other');
    const profile = { name: 'shell', runtime: 'general', model: 'openai-compatible:fake-model', tools: ['@default', '@exec'] };
    expect((await svc.api('/api/profiles', { method: 'POST', json: profile })).status).toBe(201);
    expect((await svc.api('/api/profiles', { method: 'POST', json: profile, key: otherKey })).status).toBe(201);
  });
  afterAll(async () => {
    await svc?.stop();
    await fake?.close();
  });

  async function start(prompt: string, key = svc.key): Promise<string> {
    const res = await svc.api('/api/runs', { method: 'POST', json: { profile: 'shell', prompt }, key });
    expect(res.status).toBe(202);
    return ((await res.json()) as { runId: string }).runId;
  }
  /** The stream a client following the run from its start saw, then the stream replayed once it had ended. */
  async function liveAndReplay(runId: string, key = svc.key): Promise<{ live: SseFrame[]; replay: SseFrame[] }> {
    const live = await followSse((signal) => svc.api(`/api/runs/${runId}/stream`, { signal, key })).ended;
    const replay = await readSse(await svc.api(`/api/runs/${runId}/stream`, { key }));
    return { live, replay };
  }

  it.each(Object.keys(NASTY))('%s in run_command ends with result, and the replay equals the live stream', async (name) => {
    const runId = await start(command(NASTY[name as keyof typeof NASTY]));
    const { live, replay } = await liveAndReplay(runId);
    expect(live.at(-1)!.event).toMatchObject({ type: 'result', message: expect.stringMatching(/^TOOL-RESULT-SEEN: /) });
    expect(live.find((f) => f.event.type === 'tool_result')!.event).toMatchObject({ toolName: 'run_command', isError: false });
    expect(replay).toEqual(live);
    expect(((await (await svc.api(`/api/runs/${runId}`)).json()) as { status: string }).status).toBe('ok');
  });

  it("keeps a NUL exactly: the command's output, the tool result and the model's answer hold a\\0b", async () => {
    const runId = await start(command("printf 'a\\000b'"));
    const { live, replay } = await liveAndReplay(runId);
    const result = live.find((f) => f.event.type === 'tool_result')!.event;
    expect(result.output).toMatchObject({ structuredContent: { stdout: 'a\u0000b' } });
    expect(live.at(-1)!.event.message).toBe('TOOL-RESULT-SEEN: a\u0000b');
    expect(replay).toEqual(live);
  });

  it('answers fs_read of a binary file with its size and media type, and replays that answer', async () => {
    const first = await svc.api('/api/runs', { method: 'POST', json: { profile: 'shell', prompt: command("head -c 300 /dev/urandom > noise.bin; printf 'a\\000b' > nul.txt") } });
    const { runId, sessionId } = (await first.json()) as { runId: string; sessionId: string };
    expect((await liveAndReplay(runId)).live.at(-1)!.event.type).toBe('result');
    for (const [file, answer] of [
      ['noise.bin', 'TOOL-RESULT-SEEN: [binary file /work/noise.bin: 300 bytes, application/octet-stream; not shown as text. fs_read with encoding "base64" returns its bytes]'],
      ['nul.txt', 'TOOL-RESULT-SEEN: [binary file /work/nul.txt: 3 bytes, text/plain; not shown as text. fs_read with encoding "base64" returns its bytes]'],
    ]) {
      const res = await svc.api('/api/runs', { method: 'POST', json: { profile: 'shell', sessionId, prompt: `CALL_TOOL fs_read ${JSON.stringify({ path: file })}` } });
      const { live, replay } = await liveAndReplay(((await res.json()) as { runId: string }).runId);
      expect(live.at(-1)!.event).toMatchObject({ type: 'result', message: answer });
      expect(replay).toEqual(live);
    }
    const res = await svc.api('/api/runs', { method: 'POST', json: { profile: 'shell', sessionId, prompt: 'CALL_TOOL fs_read {"path":"nul.txt","encoding":"base64"}' } });
    const { live } = await liveAndReplay(((await res.json()) as { runId: string }).runId);
    expect(live.at(-1)!.event.message).toBe(`TOOL-RESULT-SEEN: ${Buffer.from('a\0b').toString('base64')}`);
  });

  it('stores a name holding a NUL and a lone surrogate as sent (a plain text column)', async () => {
    const name = 'ci \u0000 key \udc00';
    const res = await svc.api('/api/api-keys', { method: 'POST', json: { name } });
    expect(res.status).toBe(201);
    const { id } = (await res.json()) as { id: string };
    const keys = (await (await svc.api('/api/api-keys')).json()) as Array<{ id: string; name: string }>;
    expect(keys.find((k) => k.id === id)?.name).toBe(name);
  });

  it('takes a prompt holding a NUL and a lone surrogate, and gives both back in the run and its replay', async () => {
    const prompt = 'say a\u0000b and \ud800 please';
    const runId = await start(prompt);
    const { live, replay } = await liveAndReplay(runId);
    expect(live.at(-1)!.event).toMatchObject({ type: 'result', message: `FAKE-REPLY: ${prompt}` });
    expect(replay).toEqual(live);
    expect(await (await svc.api(`/api/runs/${runId}`)).json()).toMatchObject({ status: 'ok', subTask: { prompt } });
  });

  it('leaves the plain runs of another tenant, running at the same time, ending with result', async () => {
    const plain = Array.from({ length: 6 }, (_, i) => start(`SLOW_DELTAS 12 ${5 + i}`, otherKey));
    const nasty = Object.values(NASTY).flatMap((script) => [start(command(script)), start(command(`${script}; ${script}`))]);
    const plainIds = await Promise.all(plain);
    const nastyIds = await Promise.all(nasty);
    const ends = await Promise.all([...plainIds.map((id) => liveAndReplay(id, otherKey)), ...nastyIds.map((id) => liveAndReplay(id))]);
    for (const { live, replay } of ends) {
      expect(live.at(-1)!.event.type).toBe('result');
      expect(replay).toEqual(live);
    }
  }, 60_000);
});

describe('a /v1 session whose command prints a NUL', () => {
  let h: AgentsHarness;
  beforeAll(async () => {
    h = await startAgentsHarness({ SVC_RUN_WRITE_RETRY_MS: '600' });
  });
  afterAll(() => h?.stop());

  it('streams it live and lists the same events afterwards, NUL included', async () => {
    const sessions = h.client.beta.agents.sessions;
    const agent = await h.client.beta.agents.create({ model: FAKE_MODEL });
    const session = await sessions.create({ agent_id: agent.id, environment: { type: 'openai_hosted' } });
    const live = (await collect(sessions.stream(session.id, { input: command("printf 'a\\000b'") }))) as unknown as Array<{ type: string; event_id: string; delta?: string }>;
    const done = live.findLast((e) => e.type === 'agent.session.turn.completed' || e.type === 'agent.session.turn.failed');
    expect(done?.type).toBe('agent.session.turn.completed');
    const output = live.filter((e) => e.type === 'agent.output.command_execution_output.delta').map((e) => e.delta).join('');
    expect(output).toBe('a\u0000b');

    const replay = rawEvents(h, session.id, { 'Last-Event-ID': `evt_${session.id.split('-').at(-1)}_0` });
    await replay.until((f) => f.id === live.at(-1)!.event_id);
    await replay.close();
    const replayed = replay.frames.map((f) => f.data);
    expect(replayed.slice(replayed.findIndex((e) => e.event_id === live[0].event_id))).toEqual(live);
  });
});
