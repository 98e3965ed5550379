import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSvc, type TestSvc } from '../support/svc.ts';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.ts';
import { cli, spawnCli, tempDir } from '../support/cli.ts';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { NODE, SVC_BIN } from '../support/process.ts';

const run = promisify(execFile);

/** `svc run` streaming a real run, and the `profiles`, `sessions`, `runs` lists, against an all-in-one instance. */
const OWNER = 'ao_test_bootstrapbootstrapbootstrap01';

describe('svc run and lists', () => {
  let svc: TestSvc;
  let fake: FakeProvider;
  let env: Record<string, string>;
  beforeAll(async () => {
    fake = await startFakeProvider();
    svc = await startTestSvc({ OPENAI_COMPATIBLE_BASE_URL: fake.url, OPENAI_COMPATIBLE_API_KEY: 'x' }, 'all');
    for (const body of [
      { name: 'demo', runtime: 'general', model: 'demo:echo' },
      { name: 'fake', runtime: 'general', model: 'openai-compatible:fake-model', tools: ['@files'] },
    ]) {
      expect((await svc.api('/api/profiles', { method: 'POST', json: body })).status).toBe(201);
    }
    env = { SVC_CONFIG_DIR: tempDir(), SVC_API_URL: svc.url, SVC_API_KEY: OWNER };
  });
  afterAll(async () => {
    await svc?.stop();
    await fake?.close();
  });

  it('streams the assistant text to stdout and exits 0 when the run succeeds', async () => {
    const r = await cli(['run', 'demo', 'hello there'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('demo reply: hello there\n');
    expect(r.stderr).toMatch(/run run_\w+ finished \(session sess-/);
  });

  it('prints NDJSON with --json: the run ids first, then every event up to the result', async () => {
    const r = await cli(['run', 'demo', 'in json', '--json'], env);
    expect(r.code, r.stderr).toBe(0);
    const [first, ...events] = r.lines();
    expect(first).toEqual({ event: 'run', runId: expect.stringMatching(/^run_/), sessionId: expect.stringMatching(/^sess-/) });
    expect(events.filter((e) => e.type === 'assistant' && e.delta).map((e) => e.message).join('')).toBe('demo reply: in json');
    expect(events.at(-1)).toMatchObject({ type: 'result', message: 'demo reply: in json' });
    const run = await (await svc.api(`/api/runs/${first.runId}`)).json();
    expect(run.status).toBe('ok');
  });

  it('continues a session with --session', async () => {
    const first = (await cli(['run', 'demo', 'one', '--json'], env)).lines()[0];
    const second = (await cli(['run', 'demo', 'two', '--json', '--session', first.sessionId], env)).lines()[0];
    expect(second.sessionId).toBe(first.sessionId);
  });

  it('shows tool calls dimmed on stderr, apart from the assistant text', async () => {
    const r = await cli(['run', 'fake', 'CALL_TOOL fs_list {"path":"/work"}'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/→ fs_list \{"path":"\/work"\}/);
    expect(r.stderr).toMatch(/← fs_list: /);
    expect(r.stdout).toMatch(/^TOOL-RESULT-SEEN: /);
  });

  it('exits 1 when the run ends in error', async () => {
    const r = await cli(['run', 'fake', 'FAIL_HTTP_500'], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/run run_\w+ failed: /);
  });

  it('cancels the run on Ctrl-C and exits 130', async () => {
    const p = spawnCli(['run', 'fake', 'HANG_AFTER_FIRST', '--json'], env);
    const [line] = await p.waitFor('stdout', /^\{"event":"run".*\}\n/);
    await p.waitFor('stdout', /"type":"assistant"/);
    const { runId } = JSON.parse(line);
    p.child.kill('SIGINT');
    const { code } = await p.exited;
    expect(code).toBe(130);
    expect(p.stderr()).toMatch(new RegExp(`cancelled run ${runId}`));
    const run = await (await svc.api(`/api/runs/${runId}`)).json();
    expect(run.status).toBe('cancelled');
  });

  it('ends quietly when its reader goes away (`svc run --json | head -1`): no EPIPE, no stack trace', async () => {
    // the reply streams in deltas 50 ms apart, so `head` has gone when the later lines are written
    const script = `"$NODE" "$SVC" run fake 'SLOW_DELTAS 6 50' --json 2>"$ERR" | head -1; echo "status \${PIPESTATUS[0]}"`;
    const err = join(tempDir(), 'stderr');
    const { stdout } = await run('bash', ['-c', script], { env: { ...process.env, ...env, NODE, SVC: SVC_BIN, ERR: err } });
    expect(JSON.parse(stdout.split('\n')[0]!)).toMatchObject({ event: 'run' });
    expect(stdout).toContain('status 0');
    expect(readFileSync(err, 'utf8')).toBe('');
  });

  it('refuses an unknown profile as not found (exit 4) and a missing prompt (exit 2)', async () => {
    const unknown = await cli(['run', 'nope', 'hi'], env);
    expect(unknown.code).toBe(4);
    expect(unknown.stderr).toMatch(/unknown profile: nope/);
    expect((await cli(['run', 'demo'], env)).code).toBe(2);
  });

  it('lists profiles, sessions and runs, as rows or JSON', async () => {
    const profiles = await cli(['profiles'], env);
    expect(profiles.stdout).toBe('demo\tgeneral\tdemo:echo\nfake\tgeneral\topenai-compatible:fake-model\n');
    expect((await cli(['profiles', '--json'], env)).json().map((p: { name: string }) => p.name)).toEqual(['demo', 'fake']);
    const runs = await cli(['runs', '--limit', '2', '--json'], env);
    expect(runs.json()).toHaveLength(2);
    const rows = (await cli(['runs'], env)).stdout.trim().split('\n');
    expect(rows[0]).toMatch(/^run_\w+\t(ok|error|cancelled|running)\t(demo|fake)\tsess-/);
    const sessions = await cli(['sessions', '--json', '--q', 'sess-'], env);
    expect(sessions.json().length).toBeGreaterThan(0);
    expect((await cli(['sessions', '--limit', 'many'], env)).code).toBe(2);
  });
});
