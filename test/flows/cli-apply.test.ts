import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { startTestSvc, type TestSvc } from '../support/svc.ts';
import { cli, tempDir } from '../support/cli.ts';

/** `svc apply | get | create | delete`, `svc profiles history` and `svc api` through the real binary against one `all` instance. */
const OWNER = 'ao_test_bootstrapbootstrapbootstrap01';

let svc: TestSvc;
let env: Record<string, string>;
let folder: string;
beforeAll(async () => {
  svc = await startTestSvc({}, 'all');
  env = { SVC_CONFIG_DIR: tempDir(), SVC_API_URL: svc.url, SVC_API_KEY: OWNER };
  folder = join(tempDir('svc-apply-'), 'team');
  mkdirSync(folder);
  writeFileSync(
    join(folder, 'profile.yaml'),
    ['kind: profile', 'name: researcher', 'runtime: general', 'model: demo:echo', 'systemPrompt: You research things.', 'tools: ["@default"]', ''].join('\n'),
  );
  writeFileSync(join(folder, 'pool.json'), JSON.stringify({ kind: 'pool', name: 'research-team', description: 'people who research', members: [{ profile: 'researcher', role: 'lead' }] }));
  writeFileSync(
    join(folder, 'automation.yml'),
    ['kind: automation', 'name: nightly-digest', 'profile: researcher', 'cron: "0 6 * * *"', 'timezone: Europe/Paris', 'prompt: Summarise the news.', ''].join('\n'),
  );
});
afterAll(async () => {
  await svc?.stop();
});

const api = async (path: string) => (await svc.api(path)).json() as Promise<any>;
const edit = (file: string, from: string, to: string) => writeFileSync(join(folder, file), readFileSync(join(folder, file), 'utf8').replace(from, to));

describe('svc apply -f', () => {
  it('creates a profile, a pool and an automation from a folder, in dependency order', async () => {
    const r = await cli(['apply', '-f', folder], env);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(['profile/researcher created', 'pool/research-team created', 'automation/nightly-digest created', ''].join('\n'));
    expect(await api('/api/profiles/researcher')).toMatchObject({ runtime: 'general', model: 'demo:echo', systemPrompt: 'You research things.', tools: ['@default'] });
    expect(await api('/api/pods/research-team')).toMatchObject({ description: 'people who research', members: [{ profile: 'researcher', role: 'lead' }] });
    expect((await api('/api/automations')).find((a: any) => a.name === 'nightly-digest')).toMatchObject({ profile: 'researcher', cron: '0 6 * * *', timezone: 'Europe/Paris', status: 'active' });
  });

  it('reports no change on a second apply', async () => {
    const r = await cli(['apply', '-f', folder], env);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(['profile/researcher unchanged', 'pool/research-team unchanged', 'automation/nightly-digest unchanged', ''].join('\n'));
    expect(r.stderr).toContain('nothing to change: the server already matches the files');
  });

  it('reports exactly the field an edited file changed, and changes it', async () => {
    edit('automation.yml', 'prompt: Summarise the news.', 'prompt: Summarise the science news.');
    const r = await cli(['apply', '-f', folder, '--json'], env);
    expect(r.code).toBe(0);
    expect(r.json()).toEqual({
      dryRun: false,
      resources: [
        { kind: 'profile', name: 'researcher', action: 'unchanged', changes: {} },
        { kind: 'pool', name: 'research-team', action: 'unchanged', changes: {} },
        { kind: 'automation', name: 'nightly-digest', action: 'update', changes: { prompt: { from: 'Summarise the news.', to: 'Summarise the science news.' } } },
      ],
    });
    expect((await api('/api/automations')).find((a: any) => a.name === 'nightly-digest').prompt).toBe('Summarise the science news.');

    edit('pool.json', 'people who research', 'people who research a lot');
    const plain = await cli(['apply', '-f', join(folder, 'pool.json')], env);
    expect(plain.stdout).toBe('pool/research-team updated: description: "people who research" → "people who research a lot"\n');
    expect((await api('/api/pods/research-team')).description).toBe('people who research a lot');
  });

  it('shows the plan with --dry-run and changes nothing; a field left out of a profile is a removal', async () => {
    edit('profile.yaml', 'model: demo:echo\n', '');
    const r = await cli(['apply', '-f', folder, '--dry-run'], env);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(['profile/researcher would be updated: model: "demo:echo" → (none)', 'pool/research-team unchanged', 'automation/nightly-digest unchanged', ''].join('\n'));
    expect((await api('/api/profiles/researcher')).model).toBe('demo:echo');
    edit('profile.yaml', 'runtime: general\n', 'runtime: general\nmodel: demo:echo\n');
  });

  it('refuses a bad file before any request, naming the file and the field', async () => {
    const bad = tempDir('svc-apply-bad-');
    writeFileSync(join(bad, 'a.yaml'), 'kind: gizmo\nname: x\n');
    const r = await cli(['apply', '-f', bad], { ...env, SVC_API_URL: 'http://127.0.0.1:9' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${join(bad, 'a.yaml')}: kind: unknown kind "gizmo"; expected one of profile, pool, automation, workflow`);
    writeFileSync(join(bad, 'a.yaml'), 'kind: profile\nname: [oops\n');
    expect((await cli(['apply', '-f', bad], env)).stderr).toContain(`${join(bad, 'a.yaml')}: not valid YAML`);
  });

  it('reports the server\'s refusal of a resource', async () => {
    const bad = tempDir('svc-apply-bad-');
    writeFileSync(join(bad, 'p.yaml'), 'kind: profile\nname: wrong\nruntime: nope\n');
    const r = await cli(['apply', '-f', bad], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/request failed \(400\): runtime: /);
  });

  it('refuses a field the server does not know, naming the one meant, instead of reporting it updated on every run', async () => {
    const file = join(tempDir('svc-apply-typo-'), 'p.yaml');
    writeFileSync(file, 'kind: profile\nname: typo\nruntime: general\nmodel: demo:echo\ninstructions: Be brief.\n');
    const r = await cli(['apply', '-f', file], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('instructions: unknown field (did you mean systemPrompt?)');
    writeFileSync(file, 'kind: profile\nname: typo\nruntime: general\nmodel: demo:echo\nsystemPrompt: Be brief.\n');
    expect((await cli(['apply', '-f', file], env)).stdout).toBe('profile/typo created\n');
    expect((await cli(['apply', '-f', file], env)).stdout).toBe('profile/typo unchanged\n');
    expect((await cli(['delete', '-f', file], env)).code).toBe(0);
  });
});

describe('svc apply -f with a workflow definition', () => {
  it('creates it, then reports no change, then exactly the edited field', async () => {
    const file = join(tempDir('svc-apply-wf-'), 'digest.yaml');
    const nodes = (prompt: string) =>
      ['nodes:', '  - id: gather', '    profile: researcher', '    prompt: Find the news.', '  - id: write', '    profile: researcher', `    prompt: ${prompt}`, '    dependsOn: [gather]', ''].join('\n');
    writeFileSync(file, `kind: workflow\nname: digest\n${nodes('Write the digest.')}`);
    expect((await cli(['apply', '-f', file], env)).stdout).toBe('workflow/digest created\n');
    const defs = await api('/api/workflows/definitions');
    const def = defs.find((d: any) => d.name === 'digest');
    expect(def.nodes).toEqual([
      { id: 'gather', profile: 'researcher', prompt: 'Find the news.', dependsOn: [], onError: 'pause' },
      { id: 'write', profile: 'researcher', prompt: 'Write the digest.', dependsOn: ['gather'], onError: 'pause' },
    ]);
    expect((await cli(['apply', '-f', file], env)).stdout).toBe('workflow/digest unchanged\n');

    writeFileSync(file, `kind: workflow\nname: digest\n${nodes('Write a short digest.')}`);
    const r = await cli(['apply', '-f', file, '--json'], env);
    expect(r.json().resources).toEqual([
      {
        kind: 'workflow',
        name: 'digest',
        action: 'update',
        changes: { nodes: { from: def.nodes, to: [{ id: 'gather', profile: 'researcher', prompt: 'Find the news.' }, { id: 'write', profile: 'researcher', prompt: 'Write a short digest.', dependsOn: ['gather'] }] } },
      },
    ]);
    const after = (await api(`/api/workflows/definitions/${def.id}`)).workflowDefinition;
    expect(after.nodes[1].prompt).toBe('Write a short digest.');
    expect(parse((await cli(['get', 'workflow', 'digest'], env)).stdout)).toEqual({ kind: 'workflow', name: 'digest', nodes: after.nodes });
    expect((await cli(['delete', 'workflow', 'digest'], env)).stdout).toBe('workflow/digest deleted\n');
  });
});

describe('svc get, create, delete', () => {
  it('gets a list and one resource as a file that apply takes back unchanged', async () => {
    const list = await cli(['get', 'profiles'], env);
    expect(list.stdout).toContain('researcher\tgeneral\tdemo:echo');
    const one = await cli(['get', 'pod', 'research-team'], env);
    expect(parse(one.stdout)).toEqual({ kind: 'pool', name: 'research-team', description: 'people who research a lot', members: [{ profile: 'researcher', role: 'lead' }] });
    const copy = join(tempDir('svc-get-'), 'pool.yaml');
    writeFileSync(copy, one.stdout);
    expect((await cli(['apply', '-f', copy], env)).stdout).toBe('pool/research-team unchanged\n');
    expect((await cli(['get', 'automation', 'nope'], env)).code).toBe(4);
  });

  it('creates from a file, refuses to create twice, and deletes by name or by file', async () => {
    const file = join(tempDir('svc-create-'), 'p.yaml');
    writeFileSync(file, 'kind: profile\nname: scratch\nruntime: general\nmodel: demo:echo\n---\nkind: automation\nname: scratch-daily\nprofile: scratch\ncron: "0 7 * * *"\n');
    expect((await cli(['create', '-f', file], env)).stdout).toBe('profile/scratch created\nautomation/scratch-daily created\n');
    const again = await cli(['create', '-f', file], env);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('profile scratch already exists');
    expect((await cli(['delete', '-f', file], env)).stdout).toBe('automation/scratch-daily deleted\nprofile/scratch deleted\n');
    expect((await svc.api('/api/profiles/scratch')).status).toBe(404);
    expect((await cli(['delete', 'profile', 'scratch'], env)).code).toBe(4);
  });
});

describe('svc profiles history', () => {
  it('lists the versions newest first with what changed', async () => {
    const r = await cli(['profiles', 'history', 'researcher'], env);
    expect(r.code).toBe(0);
    const rows = r.stdout.trim().split('\n').map((l) => l.split('\t'));
    expect(rows.map((row) => row[0])).toEqual(['1']);
    expect(rows[0][3]).toContain('systemPrompt: (none) → "You research things."');
    expect((await cli(['profiles', '--json'], env)).json().map((p: any) => p.name)).toContain('researcher');
  });
});

describe('svc api', () => {
  it('passes a call through with the key and prints the body', async () => {
    const r = await cli(['api', 'get', '/api/profiles/researcher'], env);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ name: 'researcher', runtime: 'general' });
    const pinned = await cli(['api', 'POST', '/api/profiles/researcher/pin'], env);
    expect(JSON.parse(pinned.stdout)).toMatchObject({ name: 'researcher', pinned: true });
    const put = await cli(['api', 'PUT', '/api/notifications/settings', '--data', '{"email":{"to":["ops@example.com"]}}'], env);
    expect(JSON.parse(put.stdout)).toEqual({ email: { enabled: true, to: ['ops@example.com'], from: null }, webhooks: [] });
  });

  it('prints the error body and exits with the status\'s code', async () => {
    const r = await cli(['api', 'GET', '/api/profiles/nope'], env);
    expect(r.code).toBe(4);
    expect(JSON.parse(r.stdout)).toEqual({ error: 'unknown profile: nope' });
    const bad = await cli(['api', 'POST', '/api/profiles', '-d', '{"name":"x"}'], env);
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stdout).error).toMatch(/^runtime: /);
    expect((await cli(['api', 'FETCH', '/api/profiles'], env)).code).toBe(2);
    expect((await cli(['api', 'POST', '/api/profiles', '--data', '{nope'], env)).code).toBe(2);
    const get = await cli(['api', 'GET', '/api/profiles', '--data', '{}'], env);
    expect(get.code).toBe(2);
    expect(get.stderr).toContain('--data: a GET request has no body');
  });
});
