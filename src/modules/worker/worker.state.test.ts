import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configureLogging } from '../../shared/log.ts';
import { startTestWorker, runBody, runToEnd, exportState, importState, type TestWorker } from '../../../test/support/worker.ts';

configureLogging({ level: 'warn' });

describe('worker state export and import', () => {
  let general: TestWorker;
  let all: TestWorker;
  beforeAll(async () => {
    general = await startTestWorker({ mode: 'general' });
    all = await startTestWorker({ mode: 'all' });
  });
  afterAll(async () => {
    await general.close();
    await all.close();
  });

  it('has no exportable state for a session that never ran', async () => {
    const res = await exportState(general.url, 'sess-never');
    expect(res.status).toBe(404);
    expect((await res.json()).error).toMatch(/no exportable state/);
  });

  it('exports a session history as JSON with the runtime session id', async () => {
    await runToEnd(general.url, runBody('keep me', { sessionId: 'sess-export' }));
    const res = await exportState(general.url, 'sess-export');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(res.headers.get('x-runtime-session-id')).toBe('sess-export');
    expect(await res.json()).toEqual([
      { role: 'user', content: 'keep me' },
      { role: 'assistant', content: [{ type: 'text', text: 'demo reply: keep me' }] },
    ]);
  });

  it('imports a history and answers the next turn on top of it', async () => {
    const history = [
      { role: 'user', content: 'earlier question' },
      { role: 'assistant', content: [{ type: 'text', text: 'earlier answer' }] },
    ];
    expect((await importState(general.url, 'sess-import', JSON.stringify(history))).status).toBe(204);
    await runToEnd(general.url, runBody('next', { sessionId: 'sess-import' }));
    const exported = await (await exportState(general.url, 'sess-import')).json();
    expect(exported.slice(0, 2)).toEqual(history);
    expect(exported).toHaveLength(4);
  });

  it.each([
    ['malformed JSON', '[{"role":'],
    ['a JSON object instead of an array', '{"role":"user","content":"x"}'],
    ['an invalid model message', '[{"role":"wizard","content":"x"}]'],
  ])('refuses %s with a 400 and leaves the session unseeded', async (_label, body) => {
    const res = await importState(general.url, 'sess-bad-import', body);
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatch(/^state/);
    expect((await exportState(general.url, 'sess-bad-import')).status).toBe(404);
  });

  it('rejects a malformed percent-encoded session id', async () => {
    for (const method of ['GET', 'POST']) {
      const res = await fetch(`${general.url}/state/sess-%E0%A4%A`, { method, body: method === 'POST' ? '[]' : undefined });
      expect(res.status).toBe(400);
      expect((await res.json()).error).toMatch(/percent-encoding/);
    }
  });

  it('requires a known runtime query in MODE=all', async () => {
    const missing = await exportState(all.url, 'sess-x');
    expect(missing.status).toBe(400);
    expect((await missing.json()).error).toMatch(/runtime: required when MODE is all/);
    const unknown = await exportState(all.url, 'sess-x', '?runtime=gpt');
    expect(unknown.status).toBe(400);
    expect((await unknown.json()).error).toMatch(/unknown runtime "gpt"/);
    expect((await exportState(all.url, 'sess-x', '?runtime=general')).status).toBe(404);
    expect((await exportState(all.url, 'sess-x', '?runtime=runtime_a')).status).toBe(404);
  });

  it('rejects a runtime query this MODE does not serve', async () => {
    const res = await importState(general.url, 'sess-y', '[]', '?runtime=runtime_b');
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatch(/runtime_b is not served/);
  });

  it.each(['runtime_a', 'runtime_b'])('refuses a %s import that is not a tar.gz bundle, seeding nothing', async (runtime) => {
    const res = await importState(all.url, 'sess-z', '{}', `?runtime=${runtime}`);
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatch(/^state: not a gzip stream/);
    expect((await exportState(all.url, 'sess-z', `?runtime=${runtime}`)).status).toBe(404);
  });
});
