import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI, { toFile } from 'openai';
import { zipSync } from 'fflate';
import { parse } from 'valibot';
import { EnvironmentParam } from '../../src/modules/agents-api/environments/environment.schema.ts';
import { createEnvironment, readWorkspace } from '../../src/modules/agents-api/environments/environments.service.ts';
import { createSecretBox } from '../../src/modules/agents-api/secret-box.ts';
import type { ResourceDeps } from '../../src/modules/agents-api/deps.ts';
import { rawV1, SECRETS_KEY, startSdkSvc, type SdkSvc } from '../support/agents-sdk.ts';
import { backends, startOn } from '../support/backends.ts';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const zipB64 = Buffer.from(zipSync({ 'SKILL.md': new TextEncoder().encode('---\nname: inline\ndescription: inline\n---\n') })).toString('base64');
const skillMd = (name: string) => new TextEncoder().encode(`---\nname: ${name}\ndescription: ${name} skill\n---\nbody\n`);

describe.each(backends)('environment templates and environments through the openai SDK on $name', (backend) => {
  let t: SdkSvc;
  let deps: ResourceDeps;
  let fileId: string;
  let skillId: string;
  beforeAll(async () => {
    t = await startOn(backend, (url) => startSdkSvc({ DATABASE_URL: url }));
    deps = { db: t.svc.server.built.database!.db, box: createSecretBox(SECRETS_KEY) };
    fileId = (await t.client.files.create({ file: await toFile(new TextEncoder().encode('from the files api'), 'input.txt'), purpose: 'user_data' })).id;
    skillId = (await t.client.skills.create({ files: [await toFile(skillMd('helper'), 'helper/SKILL.md')] })).id;
  });
  afterAll(() => t?.stop());

  const templates = () => t.client.beta.agents.environments.templates;

  it('creates a template from {} with the documented defaults (§8 item 16)', async () => {
    const tpl = await templates().create();
    expect(tpl).toEqual({
      id: expect.stringMatching(/^envtpl_/),
      capability_directories: [],
      created_at: expect.any(Number),
      files: [],
      name: null,
      network: { access: 'enabled', allowed_domains: [] },
      object: 'agent.environment.template',
      packages: { npm: [], python: [], system: [] },
      plugins: [],
      skills: [],
      updated_at: expect.any(Number),
    });
  });

  it('keeps env, setup_commands and inline contents write-only (§8 item 18)', async () => {
    const raw = await rawV1(t.svc, '/agents/environments/templates', {
      method: 'POST',
      json: {
        name: 'full',
        capability_directories: ['/workspace/.agents'],
        env: { API_TOKEN: 'ENV-SECRET-VALUE' },
        setup_commands: [{ command: 'echo SETUP-SECRET-CMD' }],
        files: [
          { type: 'inline', path: '/workspace/notes.md', data: b64('INLINE-DATA-CONTENT') },
          { type: 'file_id', path: '/workspace/data/input.txt', file_id: fileId },
        ],
        network: { access: 'disabled' },
        packages: { npm: ['left-pad'], python: null },
        plugins: [{ type: 'inline', name: 'plug', description: 'a plugin', source: { type: 'base64', media_type: 'application/zip', data: zipB64 } }],
        skills: [
          { type: 'skill_reference', skill_id: skillId, version: 'latest' },
          { type: 'inline', name: 'inline-skill', description: 'inline', source: { type: 'base64', media_type: 'application/zip', data: zipB64 } },
        ],
      },
    });
    expect(raw.status).toBe(200);
    for (const secret of ['ENV-SECRET-VALUE', 'SETUP-SECRET-CMD', b64('INLINE-DATA-CONTENT'), zipB64, '"env"', 'setup_commands', '"source"', '"data"']) expect(raw.text).not.toContain(secret);
    expect(raw.json).toMatchObject({
      name: 'full',
      capability_directories: ['/workspace/.agents'],
      files: [
        { type: 'inline', path: '/workspace/notes.md', size_bytes: 19 },
        { type: 'file_id', path: '/workspace/data/input.txt', file_id: fileId },
      ],
      network: { access: 'disabled', allowed_domains: [] },
      packages: { npm: ['left-pad'], python: [], system: [] },
      plugins: [{ type: 'inline', name: 'plug', description: 'a plugin' }],
      skills: [
        { type: 'skill_reference', skill_id: skillId, version: 'latest' },
        { type: 'inline', name: 'inline-skill', description: 'inline' },
      ],
    });
  });

  it('updates by replacing each field sent; {} changes nothing and name null clears', async () => {
    const tpl = await templates().create({ name: 'before', packages: { python: ['numpy'] } });
    expect(await templates().update(tpl.id)).toMatchObject({ name: 'before', packages: { python: ['numpy'] } });
    const updated = await templates().update(tpl.id, { name: null, capability_directories: ['/workspace/skills'] });
    expect(updated).toMatchObject({ name: null, capability_directories: ['/workspace/skills'], packages: { python: ['numpy'] } });
    expect(await templates().retrieve(tpl.id)).toEqual(updated);
  });

  it('refuses bad template input with 400 naming the parameter', async () => {
    const cases: Array<[object, string]> = [
      [{ network: { access: 'restricted', allowed_domains: ['example.com'] } }, 'network.access'],
      [{ files: [{ type: 'file_id', path: '/workspace/x', file_id: 'file-missing' }] }, 'files.0.file_id'],
      [{ files: [{ type: 'inline', path: '/etc/passwd', data: b64('x') }] }, 'files.0.path'],
      [{ files: [{ type: 'inline', path: '/workspace/x', data: 'not base64!' }] }, 'files.0.data'],
      [{ skills: [{ type: 'skill_reference', skill_id: 'skill_missing' }] }, 'skills.0.skill_id'],
      [{ env: { 'BAD NAME': 'x' } }, 'env'],
    ];
    for (const [body, param] of cases) {
      const err = await templates().create(body as never).catch((e) => e);
      expect(err, JSON.stringify(body)).toBeInstanceOf(OpenAI.BadRequestError);
      expect(err.param, JSON.stringify(body)).toBe(param);
    }
  });

  it('lists templates across pages at /agents/environments/templates, which beats {environment_id} (§8 items 13, 14)', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await t.other.beta.agents.environments.templates.create({ name: `t${i}` })).id);
    const seen: string[] = [];
    for await (const tpl of t.other.beta.agents.environments.templates.list({ limit: 2 })) seen.push(tpl.id);
    expect(seen).toEqual([...ids].reverse());
    const raw = await rawV1(t.svc, '/agents/environments/templates?limit=2', { key: t.keys.other });
    expect(raw.json).toMatchObject({ object: 'list', has_more: true, first_id: ids[4], last_id: ids[3] });
    expect(await t.other.beta.agents.environments.templates.delete(ids[0])).toEqual({ id: ids[0], deleted: true, object: 'agent.environment.template.deleted' });
    await expect(t.other.beta.agents.environments.templates.retrieve(ids[0])).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });

  it("hides another organisation's templates (404) and refuses viewer writes (403)", async () => {
    const tpl = await templates().create({ name: 'mine' });
    await expect(t.other.beta.agents.environments.templates.retrieve(tpl.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(t.other.beta.agents.environments.templates.update(tpl.id, { name: 'theirs' })).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(t.viewer.beta.agents.environments.templates.create()).rejects.toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect((await t.viewer.beta.agents.environments.templates.retrieve(tpl.id)).id).toBe(tpl.id);
  });

  it('creates an environment from a template with overrides and serves its info and workspace', async () => {
    const tpl = await templates().create({
      network: { access: 'disabled' },
      env: { TOKEN: 'tpl-secret' },
      files: [{ type: 'file_id', path: '/workspace/input.txt', file_id: fileId }],
      skills: [{ type: 'skill_reference', skill_id: skillId }],
    });
    const param = parse(EnvironmentParam, { type: 'openai_hosted', environment_template_id: tpl.id, files: [{ type: 'inline', path: '/workspace/a.md', data: b64('hello') }], packages: { npm: ['zod'] } });
    const env = await createEnvironment(deps, 'default', param);
    expect(env).toEqual({
      type: 'openai_hosted',
      id: expect.stringMatching(/^env_/),
      capability_directories: [],
      files: [{ type: 'inline', id: expect.stringMatching(/^envfile_/), path: '/workspace/a.md', size_bytes: 5 }],
      network: { access: 'disabled', allowed_domains: [] },
      packages: { npm: ['zod'], python: [], system: [] },
      plugins: [],
      skills: [{ type: 'skill_reference', skill_id: skillId, name: 'helper', description: 'helper skill', version: '1' }],
    });
    const id = (env as { id: string }).id;
    const info = await t.client.beta.agents.environments.retrieve(id);
    // packages to install: pending until its first turn sets it up (agents-events-environments.test.ts)
    expect(info).toEqual({ id, files: (env as { files: unknown }).files, object: 'agent.environment', plugins: [], skills: (env as { skills: unknown }).skills, status: 'pending', type: 'openai_hosted' });
    const workspace = await readWorkspace(deps, 'default', id);
    expect(workspace.secrets.env).toEqual({ TOKEN: 'tpl-secret' });
    expect(new TextDecoder().decode(workspace.files.find((f) => f.path === '/workspace/a.md')!.content)).toBe('hello');

    const widen = parse(EnvironmentParam, { type: 'openai_hosted', environment_template_id: tpl.id, network: { access: 'enabled' } });
    await expect(createEnvironment(deps, 'default', widen)).rejects.toMatchObject({ status: 400, message: expect.stringMatching(/^environment\.network\.access: may not widen/) });
    await expect(createEnvironment(deps, 'default', parse(EnvironmentParam, { type: 'self_hosted', workspace_directory: '/w' }))).rejects.toMatchObject({ status: 400 });
  });

  it('adds files (data never echoed) and lists them as token pages with next → page (§8 item 13)', async () => {
    const env = (await createEnvironment(deps, 'default', parse(EnvironmentParam, { type: 'openai_hosted' }))) as { id: string };
    const files = t.client.beta.agents.environments.files;
    const raw = await rawV1(t.svc, `/agents/environments/${env.id}/files`, { method: 'POST', json: { type: 'inline', path: '/workspace/src/a.ts', data: b64('SECRET-INLINE') } });
    expect(raw.json).toEqual({ environment_id: env.id, object: 'agent.environment.file', path: '/workspace/src/a.ts', size_bytes: 13 });
    expect(raw.text).not.toContain(b64('SECRET-INLINE'));
    expect(await files.create(env.id, { type: 'file_id', path: '/workspace/input.txt', file_id: fileId })).toEqual({ environment_id: env.id, object: 'agent.environment.file', path: '/workspace/input.txt', size_bytes: 18 });
    for (const p of ['/workspace/src/a/b.ts', '/workspace/src/a-b.ts', '/workspace/README.md', '/workspace/src/Z.ts']) await files.create(env.id, { type: 'inline', path: p, data: b64(p) });

    const asc: string[] = [];
    for await (const f of files.list(env.id, { limit: 2, order: 'asc' })) asc.push(f.path);
    // Case-sensitive, by path component: "a" < "a-b" < "a.ts" (and "/workspace/src/a/b.ts" precedes "/workspace/src/a-b.ts").
    expect(asc).toEqual(['/workspace/README.md', '/workspace/input.txt', '/workspace/src/Z.ts', '/workspace/src/a/b.ts', '/workspace/src/a-b.ts', '/workspace/src/a.ts']);
    const desc: string[] = [];
    for await (const f of files.list(env.id, { limit: 2 })) desc.push(f.path);
    expect(desc).toEqual([...asc].reverse());
    const first = await files.list(env.id, { limit: 2 });
    expect(first.has_more).toBe(true);
    expect(first.next).toEqual(expect.any(String));
    const under: string[] = [];
    for await (const f of files.list(env.id, { path: '/workspace/src/a', order: 'asc' })) under.push(f.path);
    expect(under).toEqual(['/workspace/src/a/b.ts']);
    const nullPath = await rawV1(t.svc, `/agents/environments/${env.id}/files?path=&limit=100`);
    expect(nullPath.json.data).toHaveLength(6); // §8 item 22: a null filter arrives empty and means absent
    expect((await rawV1(t.svc, `/agents/environments/${env.id}/files?page=garbage`)).json.error.param).toBe('page');

    const outside = await files.create(env.id, { type: 'inline', path: '/etc/x', data: b64('x') }).catch((e) => e);
    expect(outside).toBeInstanceOf(OpenAI.BadRequestError);
    expect(outside.param).toBe('path');
    await expect(t.other.beta.agents.environments.retrieve(env.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(t.other.beta.agents.environments.files.list(env.id).then((p) => p.data)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(t.viewer.beta.agents.environments.files.create(env.id, { type: 'inline', path: '/workspace/v', data: b64('v') })).rejects.toBeInstanceOf(OpenAI.PermissionDeniedError);
  });
});
