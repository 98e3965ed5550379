import { describe, expect, it } from 'vitest';
import { zipSync } from 'fflate';
import { parseFrontMatter } from './front-matter.ts';
import { inspectSkill, unzip, zipSkill, type SkillFile } from './skill-archive.ts';

const enc = (s: string) => new TextEncoder().encode(s);
const md = (front: string) => enc(`---\n${front}\n---\n# Body\n`);
const file = (path: string, content: Uint8Array = enc('x')): SkillFile => ({ path, content });

describe('SKILL.md front matter', () => {
  it('reads plain, quoted, continued and block values, and skips nested mappings', () => {
    const fields = parseFrontMatter(
      '---\r\nname: "pdf-tools"\r\ndescription: >\r\n  Fills PDF forms\r\n  and signs them.\r\nmetadata:\r\n  owner: me\r\nlicense: Apache-2.0 # comment\r\nnotes: |\r\n  line one\r\n  line two\r\n---\r\nbody',
    );
    expect(fields).toEqual({ name: 'pdf-tools', description: 'Fills PDF forms and signs them.', license: 'Apache-2.0', notes: 'line one\nline two' });
    expect(parseFrontMatter("---\nname: 'it''s'\ndescription: plain words\n  continued\n---")).toEqual({ name: "it's", description: 'plain words continued' });
  });

  it('is undefined without an opening and closing --- block', () => {
    expect(parseFrontMatter('# just markdown')).toBeUndefined();
    expect(parseFrontMatter('---\nname: x\n')).toBeUndefined();
  });
});

describe('skill file sets', () => {
  it('finds SKILL.md at the top level or in the one directory every path shares', () => {
    expect(inspectSkill([file('SKILL.md', md('name: a\ndescription: top')), file('lib/x.py')])).toEqual({ name: 'a', description: 'top' });
    expect(inspectSkill([file('s/SKILL.md', md('name: b\ndescription: nested')), file('s/lib/x.py')])).toEqual({ name: 'b', description: 'nested' });
  });

  it('refuses a missing, misplaced or repeated SKILL.md and a nameless or description-less one', () => {
    expect(() => inspectSkill([file('a/readme.md')])).toThrow(/SKILL\.md is required/);
    expect(() => inspectSkill([file('a/SKILL.md', md('name: a\ndescription: d')), file('b/other.md')])).toThrow(/SKILL\.md is required at the skill root/);
    expect(() => inspectSkill([file('SKILL.md', md('name: a\ndescription: d')), file('sub/SKILL.md', md('name: b\ndescription: d'))])).toThrow(/exactly one SKILL\.md/);
    expect(() => inspectSkill([file('SKILL.md', md('description: d'))])).toThrow(/`name`/);
    expect(() => inspectSkill([file('SKILL.md', md('name: a'))])).toThrow(/`description`/);
    expect(() => inspectSkill([file('SKILL.md', Uint8Array.of(0xff, 0xfe))])).toThrow(/UTF-8/);
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
    await expect(unzip(enc('PK\u0003\u0004 broken'))).rejects.toThrow(/^files: /);
  });
});
