import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { zipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ARCHIVE_CHANNEL, type ArchiveProgress } from '../../src/shared/archive/index.ts';
import { startSdkSvc, type SdkSvc } from '../support/agents-sdk.ts';
import { server } from '../support/backends.ts';
import { craftZip, lyingZip } from '../support/zip.ts';

/**
 * Archives a tenant uploads, through the real HTTP surface of one `all`-module conductor: a zip bomb is refused with a
 * 413 naming the limit while the server keeps answering everyone else, and bad entry names, entry types, skill names
 * and front matter are 400s naming the problem, on `/v1/skills`, `/api/skills/import` and /v1 environment templates.
 */
let t: SdkSvc;
let cleanup: () => Promise<void>;
beforeAll(async () => {
  const db = await server.setup();
  cleanup = db.cleanup;
  t = await startSdkSvc({ DATABASE_URL: db.url });
});
afterAll(async () => {
  await t?.stop();
  await cleanup?.();
});

const MiB = 1024 * 1024;
const enc = (s: string) => new TextEncoder().encode(s);
const skillMd = (front: string) => enc(`---\n${front}\n---\n\n# Body\n`);

async function postSkill(files: Array<[Uint8Array, string]>, key = t.keys.owner): Promise<Response> {
  const form = new FormData();
  for (const [bytes, name] of files) form.append(files.length === 1 ? 'files' : 'files[]', new Blob([new Uint8Array(bytes)]), name);
  return t.svc.api('/v1/skills', { method: 'POST', body: form, key });
}
const json = async (res: Response) => ({ status: res.status, body: (await res.json()) as any });
const skillNames = async () => (await t.client.skills.list()).data.map((s) => s.name);

describe('a zip bomb posted to /v1/skills', () => {
  it('is refused with a 413 naming the limit, while /healthz and another tenant are answered during the inflation', async () => {
    // 70 entries that each declare 100 bytes and inflate to 1 MiB (about 50:1, under the ratio limit): 70 MiB real
    const bomb = lyingZip({ entries: 70, entryBytes: MiB, prefix: 'bomb/' });
    const progress: ArchiveProgress[] = [];
    let inflating!: () => void;
    const secondEntry = new Promise<void>((resolve) => (inflating = resolve));
    const listener = (message: unknown) => {
      const p = message as ArchiveProgress;
      if (p.field !== 'files') return;
      progress.push(p);
      if (p.event === 'entry' && p.index === 2) inflating(); // the first 1 MiB is out: inflation is under way
    };
    subscribe(ARCHIVE_CHANNEL, listener);
    try {
      let answered = false;
      const refusal = postSkill([[bomb, 'bomb.zip']]).then(async (res) => ((answered = true), json(res)));
      expect(await Promise.race([secondEntry.then(() => 'inflating'), refusal.then(() => 'answered')])).toBe('inflating');

      const [health, other] = await Promise.all([fetch(`${t.svc.url}/healthz`), t.svc.api('/v1/skills', { key: t.keys.other })]);
      const stillInflating = !answered && !progress.some((p) => p.event === 'end');
      expect({ health: health.status, other: other.status, stillInflating }).toEqual({ health: 200, other: 200, stillInflating: true });

      expect(await refusal).toEqual({
        status: 413,
        body: { error: { message: 'files: the archive inflates past 64 MiB (67108864 bytes), the limit on total inflated bytes', type: 'invalid_request_error', param: 'files', code: 'archive_total_bytes' } },
      });
      const end = progress.find((p) => p.event === 'end') as Extract<ArchiveProgress, { event: 'end' }>;
      expect(end.refused).toBe('archive_total_bytes');
      expect(end.inflatedBytes).toBeLessThan(65 * MiB);
    } finally {
      unsubscribe(ARCHIVE_CHANNEL, listener);
    }
  });

  it('of 4 MiB holding 4 GiB of zeros is refused at the compression ratio after a few MiB', async () => {
    const bomb = lyingZip({ entries: 1000, entryBytes: 4 * MiB, data: new Uint8Array(4 * MiB) });
    const res = await json(await postSkill([[bomb, 'zeros.zip']]));
    expect(res.status).toBe(413);
    expect(res.body.error).toMatchObject({ param: 'files', code: 'archive_ratio', message: expect.stringMatching(/^files: the archive inflates more than 100:1 /) });
  });
});

describe('archive entries and skill names on /v1/skills', () => {
  it.each([
    ['a traversal', '../../etc/cron.d/x', 'archive_entry_name', 'climbs out of the archive'],
    ['an absolute path', '/etc/passwd', 'archive_entry_name', 'is an absolute path'],
    ['a drive letter', 'C:\\Windows\\x.dll', 'archive_entry_name', 'starts with a drive letter'],
    ['a backslash traversal', 'skill\\..\\..\\x', 'archive_entry_name', 'climbs out of the archive'],
  ])('refuses a zip entry with %s (400 naming it)', async (_label, name, code, why) => {
    const zip = craftZip([{ name: 'SKILL.md', data: skillMd('name: ok\ndescription: d') }, { name, data: enc('x') }]);
    const res = await json(await postSkill([[zip, 'evil.zip']]));
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ param: 'files', code, message: expect.stringContaining(why) });
  });

  it.each([
    ['a symbolic link', 0o120777, 'is a symbolic link'],
    ['a device', 0o020666, 'is a device'],
  ])('refuses a zip holding %s (400)', async (_label, mode, why) => {
    const zip = craftZip([{ name: 'SKILL.md', data: skillMd('name: ok\ndescription: d') }, { name: 'passwd', data: enc('/etc/passwd'), mode }]);
    const res = await json(await postSkill([[zip, 'link.zip']]));
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ param: 'files', code: 'archive_entry_type', message: `files: entry "passwd" ${why} (only regular files and folders are allowed)` });
  });

  it.each(['../../etc', 'a/b', 'a\\\\b', 'a..b', 'nul\\u0000byte'])('refuses the skill name %j with a 400 naming files, in a zip and in a directory upload', async (name) => {
    const md = skillMd(`name: "${name}"\ndescription: d`);
    for (const res of [await json(await postSkill([[zipSync({ 'SKILL.md': md }), 'named.zip']])), await json(await postSkill([[md, 's/SKILL.md'], [enc('x'), 's/a.txt']]))]) {
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ param: 'files', message: expect.stringMatching(/^files: SKILL\.md `name` .* is not a skill name/) });
    }
    expect(await skillNames()).not.toContain(name);
  });

  it.each([
    ['YAML that does not parse', 'name: [unclosed\ndescription: d', 'front matter is not valid YAML'],
    ['a colon inside a plain value', 'name: ok\ndescription: use when: asked', 'front matter is not valid YAML'],
    ['a key given twice', 'name: a\nname: b\ndescription: d', 'front matter is not valid YAML'],
    ['a list instead of a mapping', '- name\n- description', 'front matter must be a mapping'],
    ['a name that is not a string', 'name: [a, b]\ndescription: d', '`name` must be a string'],
  ])('refuses front matter with %s (400 naming the problem)', async (_label, front, problem) => {
    const res = await json(await postSkill([[skillMd(front), 's/SKILL.md'], [enc('x'), 's/a.txt']]));
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ param: 'files', message: expect.stringContaining(problem) });
  });

  it('still takes an ordinary zip made by a zip tool', async () => {
    const zip = zipSync({ 'tidy/SKILL.md': skillMd('name: tidy\ndescription: A tidy skill'), 'tidy/scripts/run.sh': enc('echo hi\n') });
    expect(await json(await postSkill([[zip, 'tidy.zip']]))).toMatchObject({ status: 200, body: { name: 'tidy', description: 'A tidy skill' } });
  });
});

describe('skill names, front matter and zips on /api/skills/import', () => {
  const importParts = async (parts: Array<[Uint8Array, string]>) => {
    const form = new FormData();
    for (const [bytes, name] of parts) form.append('file', new Blob([new Uint8Array(bytes)]), name);
    return json(await t.svc.api('/api/skills/import', { method: 'POST', body: form }));
  };
  const importFolder = (skill: string) => importParts([[enc(skill), 'SKILL.md']]);

  it('dry-runs a zip of the skill folder like the folder, execute bits included', async () => {
    const zip = craftZip([
      { name: 'zipped/SKILL.md', data: skillMd('name: zipped\ndescription: From a zip') },
      { name: 'zipped/scripts/run.sh', data: enc('echo hi\n'), mode: 0o100755 },
    ]);
    const res = await importParts([[zip, 'zipped.zip']]);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ skill: { name: 'zipped' }, resources: [{ path: 'scripts/run.sh', executable: true, bytes: 8 }], validation: { ok: true } });
  });

  it('refuses a zip bomb with a 413 naming the limit, and a zip holding a link with a 400', async () => {
    const bomb = await importParts([[lyingZip({ entries: 20, entryBytes: MiB }), 'bomb.zip']]);
    expect(bomb).toEqual({ status: 413, body: { error: 'body: the archive inflates past 16 MiB (16777216 bytes), the limit on total inflated bytes' } });
    const link = await importParts([[craftZip([{ name: 'SKILL.md', data: skillMd('name: l\ndescription: d') }, { name: 'x', data: enc('/etc/passwd'), mode: 0o120777 }]), 'link.zip']]);
    expect(link).toEqual({ status: 400, body: { error: 'body: entry "x" is a symbolic link (only regular files and folders are allowed)' } });
  });

  it.each([
    ['a name that climbs', '---\nname: ../../etc\ndescription: d\n---\n', 'is not a name of 1-128 letters'],
    ['a name holding ".."', '---\nname: a..b\ndescription: d\n---\n', 'without ".."'],
    ['YAML that does not parse', '---\nname: [unclosed\ndescription: d\n---\n', 'front matter is not valid YAML'],
  ])('refuses %s with a 400 naming it, staging nothing', async (_label, skill, problem) => {
    const res = await importFolder(skill);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ stagingId: null, validation: { ok: false } });
    expect(res.body.error).toContain(problem);
  });
});

describe('inline zips of /v1 environment templates', () => {
  const template = (skill: { name: string; data: Uint8Array }) =>
    t.svc.api('/v1/agents/environments/templates', {
      method: 'POST',
      json: { name: 'tpl', skills: [{ type: 'inline', name: skill.name, description: 'd', source: { type: 'base64', media_type: 'application/zip', data: Buffer.from(skill.data).toString('base64') } }] },
    }).then(json);

  it('refuses a bomb with a 413 naming the field and the limit', async () => {
    const res = await template({ name: 'bomb', data: lyingZip({ entries: 200, entryBytes: MiB, data: new Uint8Array(MiB) }) });
    expect(res.status).toBe(413);
    expect(res.body.error).toMatchObject({ param: 'skills.0.source.data', code: 'archive_ratio' });
  });

  it('refuses a traversal entry and a skill name that is a path (400)', async () => {
    const evil = await template({ name: 'ok', data: craftZip([{ name: '../x', data: enc('x') }]) });
    expect(evil.status).toBe(400);
    expect(evil.body.error).toMatchObject({ param: 'skills.0.source.data', code: 'archive_entry_name' });
    const named = await template({ name: '../../etc', data: zipSync({ 'SKILL.md': skillMd('name: ok\ndescription: d') }) });
    expect(named.status).toBe(400);
    expect(named.body.error).toMatchObject({ param: 'skills.0.name', message: expect.stringContaining('is not a skill name') });
  });
});
