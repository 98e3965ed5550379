import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI, { toFile } from 'openai';
import { unzipSync, zipSync } from 'fflate';
import { rawV1, startSdkSvc, type SdkSvc } from '../support/agents-sdk.ts';
import { backends, startOn } from '../support/backends.ts';

const enc = (s: string) => new TextEncoder().encode(s);
const skillMd = (name: string, description: string, body = 'Use it wisely.') => enc(`---\nname: ${name}\ndescription: ${description}\n---\n\n# ${name}\n\n${body}\n`);
const script = Uint8Array.from({ length: 3000 }, (_, i) => (i * 13) % 256);

async function directory(name: string, description = `The ${name} skill`) {
  return [
    await toFile(skillMd(name, description), `${name}/SKILL.md`),
    await toFile(script, `${name}/scripts/run.bin`),
    await toFile(enc('reference notes'), `${name}/docs/notes.md`),
  ];
}

async function entries(res: Response): Promise<Record<string, Uint8Array>> {
  return unzipSync(new Uint8Array(await res.arrayBuffer()));
}

describe.each(backends)('the Skills resource through the openai SDK on $name', (backend) => {
  let t: SdkSvc;
  beforeAll(async () => {
    t = await startOn(backend, (url) => startSdkSvc({ DATABASE_URL: url }));
  });
  afterAll(() => t?.stop());

  it('creates a skill from a directory upload (files[] with relative paths) and reads name and description from SKILL.md', async () => {
    const skill = await t.client.skills.create({ files: await directory('pdf-tools', 'Fill and sign PDF forms') });
    expect(skill).toEqual({ id: expect.stringMatching(/^skill_/), created_at: expect.any(Number), default_version: '1', latest_version: '1', name: 'pdf-tools', description: 'Fill and sign PDF forms', object: 'skill' });
    expect(await t.client.skills.retrieve(skill.id)).toEqual(skill);
  });

  it('round-trips the uploaded files byte for byte inside the content zip', async () => {
    const skill = await t.client.skills.create({ files: await directory('roundtrip') });
    const res = await t.client.skills.content.retrieve(skill.id);
    const files = await entries(res);
    expect(Object.keys(files).sort()).toEqual(['roundtrip/SKILL.md', 'roundtrip/docs/notes.md', 'roundtrip/scripts/run.bin']);
    expect(files['roundtrip/scripts/run.bin']).toEqual(script);
    expect(files['roundtrip/SKILL.md']).toEqual(skillMd('roundtrip', 'The roundtrip skill'));
    const v1 = await entries(await t.client.skills.versions.content.retrieve('1', { skill_id: skill.id }));
    expect(v1['roundtrip/scripts/run.bin']).toEqual(script);
  });

  it('accepts a single zip as the files part', async () => {
    const zip = zipSync({ 'SKILL.md': skillMd('zipped', 'From a zip'), 'lib/helper.py': enc('print(1)\n') });
    const skill = await t.client.skills.create({ files: await toFile(zip, 'zipped.zip', { type: 'application/zip' }) });
    expect(skill).toMatchObject({ name: 'zipped', description: 'From a zip' });
    const files = await entries(await t.client.skills.content.retrieve(skill.id));
    expect(files['lib/helper.py']).toEqual(enc('print(1)\n'));
  });

  it('answers a JSON {} create (the SDK with no files) with 400 naming files (§8 item 16)', async () => {
    const err = await t.client.skills.create({}).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.param).toBe('files');
  });

  it('refuses uploads without exactly one SKILL.md at the root, or without a name in its front matter', async () => {
    const noSkill = await t.client.skills.create({ files: [await toFile(enc('x'), 'a/readme.md')] }).catch((e) => e);
    expect(noSkill).toBeInstanceOf(OpenAI.BadRequestError);
    expect(noSkill.message).toMatch(/SKILL\.md is required/);
    const two = await t.client.skills.create({ files: [await toFile(skillMd('a', 'b'), 'a/SKILL.md'), await toFile(skillMd('c', 'd'), 'a/sub/SKILL.md')] }).catch((e) => e);
    expect(two.message).toMatch(/exactly one SKILL\.md/);
    const nameless = await t.client.skills.create({ files: [await toFile(enc('---\ndescription: no name\n---\n'), 's/SKILL.md')] }).catch((e) => e);
    expect(nameless).toBeInstanceOf(OpenAI.BadRequestError);
    expect(nameless.param).toBe('files');
  });

  it('versions: create, default flag, update default_version, list across pages, delete rules', async () => {
    const skill = await t.client.skills.create({ files: await directory('versioned', 'v1 text') });
    const v2 = await t.client.skills.versions.create(skill.id, { files: await directory('versioned', 'v2 text') });
    expect(v2).toEqual({ id: expect.stringMatching(/^skillver_/), created_at: expect.any(Number), description: 'v2 text', name: 'versioned', object: 'skill.version', skill_id: skill.id, version: '2' });
    expect(await t.client.skills.retrieve(skill.id)).toMatchObject({ default_version: '1', latest_version: '2', description: 'v1 text' });
    const v3 = await t.client.skills.versions.create(skill.id, { files: await directory('versioned', 'v3 text'), default: true });
    expect(await t.client.skills.retrieve(skill.id)).toMatchObject({ default_version: '3', latest_version: '3', description: 'v3 text' });
    for (const d of ['v4', 'v5']) await t.client.skills.versions.create(skill.id, { files: await directory('versioned', d) });

    const desc: string[] = [];
    for await (const v of t.client.skills.versions.list(skill.id, { limit: 2 })) desc.push(v.version);
    expect(desc).toEqual(['5', '4', '3', '2', '1']);
    const asc: string[] = [];
    for await (const v of t.client.skills.versions.list(skill.id, { limit: 2, order: 'asc' })) asc.push(v.version);
    expect(asc).toEqual(['1', '2', '3', '4', '5']);

    const updated = await t.client.skills.update(skill.id, { default_version: '2' });
    expect(updated).toMatchObject({ default_version: '2', latest_version: '5', description: 'v2 text' });
    const bad = await t.client.skills.update(skill.id, { default_version: '9' }).catch((e) => e);
    expect(bad).toBeInstanceOf(OpenAI.BadRequestError);
    expect(bad.param).toBe('default_version');

    const refused = await t.client.skills.versions.delete('2', { skill_id: skill.id }).catch((e) => e);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect(refused.param).toBe('version');
    expect(await t.client.skills.versions.delete('5', { skill_id: skill.id })).toEqual({ id: expect.any(String), deleted: true, object: 'skill.version.deleted', version: '5' });
    expect(await t.client.skills.retrieve(skill.id)).toMatchObject({ latest_version: '4' });
    expect(await t.client.skills.versions.retrieve('3', { skill_id: skill.id })).toEqual(v3);
    await expect(t.client.skills.versions.retrieve('5', { skill_id: skill.id })).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    const v6 = await t.client.skills.versions.create(skill.id, { files: await directory('versioned', 'v6') });
    expect(v6.version).toBe('6'); // numbers are never reused
  });

  it('lists skills across pages and deletes them (DeletedSkill)', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await t.other.skills.create({ files: await directory(`paged-${i}`) })).id);
    const seen: string[] = [];
    for await (const s of t.other.skills.list({ limit: 2 })) seen.push(s.id);
    expect(seen).toEqual([...ids].reverse());
    expect(await t.other.skills.delete(ids[0])).toEqual({ id: ids[0], deleted: true, object: 'skill.deleted' });
    await expect(t.other.skills.retrieve(ids[0])).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });

  it("hides another organisation's skills (404) and refuses viewer writes (403)", async () => {
    const skill = await t.client.skills.create({ files: await directory('private') });
    await expect(t.other.skills.retrieve(skill.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(t.other.skills.content.retrieve(skill.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(t.other.skills.versions.list(skill.id).then((p) => p.data)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(t.viewer.skills.create({ files: await directory('viewer') })).rejects.toBeInstanceOf(OpenAI.PermissionDeniedError);
    await expect(t.viewer.skills.delete(skill.id)).rejects.toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect((await t.viewer.skills.retrieve(skill.id)).id).toBe(skill.id);
  });

  it('lists skills with has_more set explicitly (§8 item 13)', async () => {
    const page = await rawV1(t.svc, '/skills?limit=1');
    expect(page.json).toMatchObject({ object: 'list', has_more: true, first_id: page.json.data[0].id, last_id: page.json.data[0].id });
  });
});
