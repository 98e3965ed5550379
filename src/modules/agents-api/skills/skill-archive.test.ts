import { describe, expect, it } from 'vitest';
import { zipSync } from 'fflate';
import { parseFrontMatter } from './front-matter.ts';
import { inspectSkill, unzip, zipSkill, type SkillFile } from './skill-archive.ts';

const enc = (s: string) => new TextEncoder().encode(s);
const md = (front: string) => enc(`---\n${front}\n---\n# Body\n`);
const file = (path: string, content: Uint8Array = enc('x')): SkillFile => ({ path, content });

describe('SKILL.md front matter', () => {
  it('reads plain, quoted, folded and block values and nested mappings, as YAML', async () => {
    const front = await parseFrontMatter(
      '---\r\nname: "pdf-tools"\r\ndescription: >\r\n  Fills PDF forms\r\n  and signs them.\r\nmetadata:\r\n  owner: me\r\nlicense: Apache-2.0 # comment\r\nnotes: |\r\n  line one\r\n  line two\r\n---\r\nbody',
    );
    expect(front.fields).toEqual({ name: 'pdf-tools', description: 'Fills PDF forms and signs them.\n', metadata: { owner: 'me' }, license: 'Apache-2.0', notes: 'line one\nline two\n' });
    expect((await parseFrontMatter("---\nname: 'it''s'\ndescription: plain words\n  continued\n---")).fields).toEqual({ name: "it's", description: 'plain words continued' });
  });

  it.each([
    ['no front matter', '# just markdown', 'must start with YAML front matter'],
    ['a block never closed', '---\nname: x\n', 'front matter is not closed by a "---" line'],
    ['YAML that does not parse', '---\nname: [unclosed\ndescription: d\n---\n', 'front matter is not valid YAML'],
    ['a colon inside a plain value', '---\nname: a\ndescription: use when: asked\n---\n', 'front matter is not valid YAML'],
    ['a key given twice', '---\nname: a\nname: b\n---\n', 'front matter is not valid YAML'],
    ['a list instead of a mapping', '---\n- name\n- description\n---\n', 'front matter must be a mapping'],
  ])('names the problem of %s', async (_label, text, problem) => {
    expect((await parseFrontMatter(text)).problem).toContain(problem);
  });
});

describe('skill file sets', () => {
  it('finds SKILL.md at the top level or in the one directory every path shares', async () => {
    expect(await inspectSkill([file('SKILL.md', md('name: a\ndescription: top')), file('lib/x.py')])).toEqual({ name: 'a', description: 'top' });
    expect(await inspectSkill([file('s/SKILL.md', md('name: b\ndescription: nested')), file('s/lib/x.py')])).toEqual({ name: 'b', description: 'nested' });
  });

  it('refuses a missing, misplaced or repeated SKILL.md and a nameless or description-less one', async () => {
    await expect(inspectSkill([file('a/readme.md')])).rejects.toThrow(/SKILL\.md is required/);
    await expect(inspectSkill([file('a/SKILL.md', md('name: a\ndescription: d')), file('b/other.md')])).rejects.toThrow(/SKILL\.md is required at the skill root/);
    await expect(inspectSkill([file('SKILL.md', md('name: a\ndescription: d')), file('sub/SKILL.md', md('name: b\ndescription: d'))])).rejects.toThrow(/exactly one SKILL\.md/);
    await expect(inspectSkill([file('SKILL.md', md('description: d'))])).rejects.toThrow(/`name`/);
    await expect(inspectSkill([file('SKILL.md', md('name: a'))])).rejects.toThrow(/`description`/);
    await expect(inspectSkill([file('SKILL.md', md('name: [a]\ndescription: d'))])).rejects.toThrow('files: SKILL.md `name` must be a string');
    await expect(inspectSkill([file('SKILL.md', Uint8Array.of(0xff, 0xfe))])).rejects.toThrow(/UTF-8/);
  });

  it.each(['../../etc', 'a/b', 'a\\\\b', '..', 'a..b', '.hidden', 'nul\\u0000byte', 'new\\nline', 'sp ace', '-dash'])('refuses the skill name %j (no paths)', async (name) => {
    await expect(inspectSkill([file('SKILL.md', md(`name: "${name}"\ndescription: d`))])).rejects.toThrow(/^files: SKILL\.md `name` .* is not a skill name/);
  });

  it.each(['pdf-tools', 'v1.2_final', 'A9'])('accepts the skill name %j', async (name) => {
    expect(await inspectSkill([file('SKILL.md', md(`name: ${name}\ndescription: d`))])).toEqual({ name, description: 'd' });
  });

  it('zips the files under their paths byte for byte and unzips them back, skipping directories and __MACOSX', async () => {
    const bin = Uint8Array.from({ length: 512 }, (_, i) => i % 256);
    const files = [file('s/SKILL.md', md('name: s\ndescription: d')), file('s/bin/data', bin)].sort((a, b) => a.path.localeCompare(b.path));
    const back = await unzip(await zipSkill(files, new Date('2030-01-01T00:00:00Z')));
    expect(back.sort((a, b) => a.path.localeCompare(b.path))).toEqual(files);
    const withJunk = zipSync({ 'd/': new Uint8Array(), '__MACOSX/d/._x': enc('junk'), 'd/SKILL.md': enc('x') });
    expect((await unzip(withJunk)).map((f) => f.path)).toEqual(['d/SKILL.md']);
  });

  it('reports a corrupt zip as a 400 naming files', async () => {
    await expect(unzip(enc('PK\u0003\u0004 broken'))).rejects.toMatchObject({ status: 400, message: expect.stringMatching(/^files: not a readable zip archive/) });
  });
});
