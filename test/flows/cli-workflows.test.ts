import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSvc, type TestSvc } from '../support/svc.ts';
import { cli, tempDir } from '../support/cli.ts';

/** `svc workflows …` through the real binary against an in-process server. */
const OWNER = 'ao_test_bootstrapbootstrapbootstrap01';

describe('svc workflows', () => {
  let svc: TestSvc;
  let env: Record<string, string>;
  let dir: string;
  beforeAll(async () => {
    svc = await startTestSvc({}, 'all');
    dir = tempDir();
    env = { SVC_CONFIG_DIR: dir, SVC_API_URL: svc.url, SVC_API_KEY: OWNER };
    expect((await svc.api('/api/profiles', { method: 'POST', json: { name: 'demo', runtime: 'general', model: 'demo:echo' } })).status).toBe(201);
    // a model whose provider has no key configured: its runs fail
    expect((await svc.api('/api/profiles', { method: 'POST', json: { name: 'nokey', runtime: 'general', model: 'openai:gpt-4o' } })).status).toBe(201);
  });
  afterAll(async () => {
    await svc?.stop();
  });
  const file = (name: string, body: unknown) => {
    const path = join(dir, name);
    writeFileSync(path, JSON.stringify(body));
    return path;
  };
  const twoSteps = { name: 'cli-two', nodes: [{ id: 'a', profile: 'demo', prompt: 'one' }, { id: 'b', profile: 'demo', prompt: 'two <{{nodes.a.output}}>', dependsOn: ['a'] }] };

  it('runs a workflow from a file and streams its plan as it moves, then lists, gets and cancels', async () => {
    const r = await cli(['workflows', 'run', '-f', file('two.json', twoSteps)], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.split('\n').filter(Boolean)).toEqual(['workflow: running', 'node a: ready', 'node a: running', 'node a: ok', 'node b: ready', 'node b: running', 'node b: ok', 'workflow: completed']);
    const json = await cli(['workflows', 'run', '-f', file('two.json', twoSteps), '--json'], env);
    const lines = json.lines();
    expect(lines[0]).toMatchObject({ event: 'workflowRun', workflowRun: { status: 'pending' } });
    expect(lines[1]).toMatchObject({ event: 'snapshot' });
    expect(lines.at(-1)).toMatchObject({ event: 'plan_status', change: { status: 3, statusLabel: 'completed' }, workflowRun: { statusLabel: 'completed' } });
    const id = lines[0].workflowRun.id;

    expect((await cli(['workflows', 'list', '--name', 'cli-two'], env)).stdout).toContain(`${id}\tcli-two\tcompleted\t`);
    const got = (await cli(['workflows', 'get', id, '--json'], env)).json();
    expect(got.nodes.map((n: any) => n.statusLabel)).toEqual(['ok', 'ok']);
    expect((await cli(['workflows', 'get', id], env)).stdout).toMatch(/b\tdemo\tok\ta\trun_/);
    expect((await cli(['workflows', 'cancel', id, '--json'], env)).json()).toMatchObject({ id, statusLabel: 'completed' });
    // by name: the newest run of that name
    expect((await cli(['workflows', 'get', 'cli-two', '--json'], env)).json()).toMatchObject({ id, name: 'cli-two' });
    expect((await cli(['workflows', 'get', 'no-such-run'], env)).code).toBe(4);
  }, 60_000);

  it('runs a saved workflow definition by its name', async () => {
    const saved = await svc.api('/api/workflows/definitions', { method: 'POST', json: { name: 'saved-two', nodes: twoSteps.nodes } });
    expect(saved.status).toBe(201);
    const r = await cli(['workflows', 'run', '--definition', 'saved-two'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim().split('\n').at(-1)).toBe('workflow: completed');
    expect((await cli(['workflows', 'run', '--definition', 'nope'], env)).stderr).toContain('no workflow definition named nope');
    expect((await cli(['workflows', 'run'], env)).code).toBe(2);
  });

  it('exits non-zero with the server message for a bad workflow, and 2 for an unreadable file', async () => {
    const cyc = await cli(['workflows', 'run', '-f', file('cycle.json', { nodes: [{ id: 'a', profile: 'demo', dependsOn: ['a'] }] })], env);
    expect(cyc.code).not.toBe(0);
    expect(cyc.stderr).toContain('nodes: cycle: a → a');
    const missing = await cli(['workflows', 'run', '-f', join(dir, 'nope.json')], env);
    expect(missing.code).toBe(2);
    expect((await cli(['workflows', 'get', 'wfr_ghost'], env)).code).toBe(4);
  });

  it('stops following a run that pauses on a failed node, says which, and exits 1', async () => {
    const r = await cli(['workflows', 'run', '-f', file('fails.json', { nodes: [{ id: 'bad', profile: 'nokey', prompt: 'x' }, { id: 'later', profile: 'demo', dependsOn: ['bad'] }] })], env);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^node bad: error \(.+\)$/m);
    expect(r.stdout.trim().split('\n').at(-1)).toBe('workflow: paused');
    expect(r.stderr).toContain('paused: node bad failed');
  });
});
