import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSvc, type TestSvc } from '../support/svc.ts';
import { cli, tempDir } from '../support/cli.ts';

/** What a user gets back when a run or a profile is asked for wrongly: a status and a message they can act on. */
const OWNER = 'ao_test_bootstrapbootstrapbootstrap01';

describe('run and profile errors a user can act on', () => {
  let svc: TestSvc;
  let env: Record<string, string>;
  beforeAll(async () => {
    svc = await startTestSvc({}, 'all');
    for (const name of ['alpha', 'beta']) {
      expect((await svc.api('/api/profiles', { method: 'POST', json: { name, runtime: 'general', model: 'demo:echo' } })).status).toBe(201);
    }
    env = { SVC_CONFIG_DIR: tempDir(), SVC_API_URL: svc.url, SVC_API_KEY: OWNER };
  });
  afterAll(async () => {
    await svc?.stop();
  });

  const finished = async (runId: string) => {
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      const run = (await (await svc.api(`/api/runs/${runId}`)).json()) as { status: string };
      if (run.status !== 'running') return run.status;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`run ${runId} still running`);
  };

  it('a run on another profile\'s session is 409 naming both profiles, over HTTP and through `svc run --session`', async () => {
    const started = await svc.api('/api/runs', { method: 'POST', json: { profile: 'beta', prompt: 'first' } });
    expect(started.status).toBe(202);
    const { runId, sessionId } = (await started.json()) as { runId: string; sessionId: string };
    expect(await finished(runId)).toBe('ok');

    const res = await svc.api('/api/runs', { method: 'POST', json: { profile: 'alpha', prompt: 'second', sessionId } });
    expect(res.status).toBe(409);
    expect(await res.json()).toEqual({ error: `session ${sessionId} belongs to profile "beta", not "alpha"; run profile beta on it or omit the session` });
    const runs = (await (await svc.api(`/api/runs?sessionId=${sessionId}`)).json()) as unknown[];
    expect(runs).toHaveLength(1); // nothing recorded for the refused run

    const r = await cli(['run', 'alpha', 'second', '--session', sessionId], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`session ${sessionId} belongs to profile "beta", not "alpha"`);

    const same = await svc.api('/api/runs', { method: 'POST', json: { profile: 'beta', prompt: 'second', sessionId } });
    expect(same.status).toBe(202);
  });
  it('a run id the tenant already used is 409, and the refused run records no session and leaves its session idle', async () => {
    const first = await svc.api('/api/runs', { method: 'POST', json: { profile: 'beta', prompt: 'first', id: 'run-taken' } });
    expect(first.status).toBe(202);
    const { sessionId } = (await first.json()) as { sessionId: string };
    expect(await finished('run-taken')).toBe('ok');
    const sessions = async () => ((await (await svc.api('/api/sessions')).json()) as Array<{ id: string }>).map((s) => s.id).sort();
    const before = await sessions();

    const onNew = await svc.api('/api/runs', { method: 'POST', json: { profile: 'beta', prompt: 'again', id: 'run-taken' } });
    expect(onNew.status).toBe(409);
    expect(await onNew.json()).toEqual({ error: 'run run-taken already exists' });
    expect(await sessions()).toEqual(before);

    const onSession = await svc.api('/api/runs', { method: 'POST', json: { profile: 'beta', prompt: 'again', id: 'run-taken', sessionId } });
    expect(onSession.status).toBe(409);
    expect(await (await svc.api(`/api/sessions/${sessionId}`)).json()).toMatchObject({ status: 'idle' });
    const next = await svc.api('/api/runs', { method: 'POST', json: { profile: 'beta', prompt: 'next', sessionId } });
    expect(next.status).toBe(202);
    expect(await finished(((await next.json()) as { runId: string }).runId)).toBe('ok');
  });

  it('a profile with a malformed model says the expected form and the string it got', async () => {
    const res = await svc.api('/api/profiles', { method: 'POST', json: { name: 'bad-model', runtime: 'general', model: 'nope' } });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      error: 'model: expected <provider>:<model_id> (or <provider>/<model_id>) for runtime general, provider one of openai, anthropic, google, bedrock, azure, mistral, xai, groq, openrouter, openai-compatible, demo; received "nope"',
    });
  });

  it('a profile accepts <provider>/<model_id> and prints it as <provider>:<model_id>', async () => {
    const res = await svc.api('/api/profiles', { method: 'POST', json: { name: 'slash-model', runtime: 'general', model: 'openrouter/anthropic/claude-sonnet-4.5' } });
    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject({ model: 'openrouter:anthropic/claude-sonnet-4.5' });
    expect(await (await svc.api('/api/profiles/slash-model')).json()).toMatchObject({ model: 'openrouter:anthropic/claude-sonnet-4.5' });
  });

  it('a profile without a runtime names the field and the allowed values', async () => {
    const res = await svc.api('/api/profiles', { method: 'POST', json: { name: 'no-runtime', model: 'demo:echo' } });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: 'runtime: required, one of general, runtime_a, runtime_b' });
  });

  it('`svc run` on an unknown profile exits 4 (not found) and names it', async () => {
    const r = await cli(['run', 'no-such-profile', 'hello'], env);
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('unknown profile: no-such-profile');
  });
});
