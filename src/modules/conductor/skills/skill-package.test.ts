import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MAX_FILE_BYTES, readPackage, withinFolder, type PackageEntry } from './skill-package.ts';

const text = (path: string, body: string, executable = false): PackageEntry => ({ path, bytes: new TextEncoder().encode(body), executable, link: false });
const SKILL = `---
name: pdf-tools
description: >
  Fill and flatten PDF forms.
license: MIT
compatibility: needs python3
allowed-tools: [run_command, fs_read]
metadata:
  author: acme
  tags: [pdf, forms]
  nested: { level: 2 }
---
# PDF tools

Run scripts/fill.sh.
`;

describe('a skill package', () => {
  it('reads YAML front matter with lists and maps, and lists every resource with its digest and executable bit', async () => {
    const script = text('scripts/fill.sh', '#!/bin/sh\necho filled\n', true);
    const png = { path: 'assets/logo.png', bytes: new Uint8Array([137, 80, 78, 71, 0, 255]), executable: false, link: false };
    const pkg = await readPackage([text('SKILL.md', SKILL), script, png]);
    expect(pkg.validation).toEqual({ ok: true, errors: [], warnings: [] });
    expect(pkg.skill).toEqual({
      name: 'pdf-tools',
      description: 'Fill and flatten PDF forms.\n',
      license: 'MIT',
      compatibility: 'needs python3',
      allowedTools: ['run_command', 'fs_read'],
      metadata: { author: 'acme', tags: ['pdf', 'forms'], nested: { level: 2 } },
    });
    expect(pkg.body).toBe('# PDF tools\n\nRun scripts/fill.sh.\n');
    const digest = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
    expect(pkg.resources).toEqual([
      { path: 'assets/logo.png', contentType: 'image/png', sha256: digest(png.bytes), executable: false, bytes: 6 },
      { path: 'scripts/fill.sh', contentType: 'text/x-shellscript', sha256: digest(script.bytes), executable: true, bytes: script.bytes.byteLength },
    ]);
    expect(pkg.requiresSandbox).toBe(true);
    expect(pkg.totalBytes).toBe(new TextEncoder().encode(SKILL).byteLength + script.bytes.byteLength + 6);
  });

  it('takes allowed-tools as a space-separated string too, and warns about keys it does not know', async () => {
    const pkg = await readPackage([text('SKILL.md', '---\nname: a\ndescription: b\nallowed-tools: Bash Read\nversion: 3\n---\nbody')]);
    expect(pkg.skill.allowedTools).toEqual(['Bash', 'Read']);
    expect(pkg.validation.ok).toBe(true);
    expect(pkg.validation.warnings).toEqual([expect.objectContaining({ code: 'unknown_key', message: expect.stringContaining('version') })]);
    expect(pkg.requiresSandbox).toBe(false);
  });

  it.each([
    ['traversal', [text('../evil.sh', 'x')], 'path_traversal', '../evil.sh'],
    ['a nested traversal', [text('scripts/../../evil.sh', 'x')], 'path_traversal', 'scripts/../../evil.sh'],
    ['an absolute name', [text('/etc/passwd', 'x')], 'absolute_path', '/etc/passwd'],
    ['a drive letter', [text('C:/x.txt', 'x')], 'absolute_path', 'C:/x.txt'],
    ['a symbolic link', [{ path: 'link.md', bytes: new Uint8Array(), executable: false, link: true }], 'link', 'link.md'],
    ['a duplicate path', [text('a.md', 'x'), text('a.md', 'y')], 'duplicate_path', 'a.md'],
    ['a second SKILL.md', [text('other/SKILL.md', '---\nname: b\ndescription: c\n---\n')], 'second_skill_md', 'other/SKILL.md'],
    ['an oversize file', [{ path: 'big.bin', bytes: new Uint8Array(MAX_FILE_BYTES + 1), executable: false, link: false }], 'file_too_large', 'big.bin'],
    ['a backslash', [text('scripts\\run.sh', 'x')], 'invalid_path', 'scripts\\run.sh'],
  ])('refuses %s', async (_label, extra, code, path) => {
    const pkg = await readPackage([text('SKILL.md', SKILL), ...extra]);
    expect(pkg.validation.ok).toBe(false);
    expect(pkg.validation.errors).toEqual([expect.objectContaining({ code, path })]);
  });

  it.each([
    ['no SKILL.md', [text('README.md', 'x')], /SKILL\.md: missing at the root/],
    ['no front matter', [text('SKILL.md', '# just markdown')], /missing the YAML front matter/],
    ['broken YAML', [text('SKILL.md', '---\nname: [unclosed\n---\n')], /not valid YAML/],
    ['a missing description', [text('SKILL.md', '---\nname: ok\n---\nbody')], /description: required/],
    ['a name with a slash', [text('SKILL.md', '---\nname: a/b\ndescription: d\n---\n')], /name: "a\/b" is not a name of 1-128 letters/],
    ['a name that climbs', [text('SKILL.md', '---\nname: ../../etc\ndescription: d\n---\n')], /name: "..\/..\/etc" is not a name/],
    ['a name holding ".."', [text('SKILL.md', '---\nname: a..b\ndescription: d\n---\n')], /without "\.\."/],
    ['a name with a backslash', [text('SKILL.md', '---\nname: a\\b\ndescription: d\n---\n')], /is not a name/],
    ['a name with a NUL', [text('SKILL.md', '---\nname: "a\\0b"\ndescription: d\n---\n')], /is not a name/],
    ['a key given twice', [text('SKILL.md', '---\nname: a\nname: b\ndescription: d\n---\n')], /not valid YAML/],
    ['metadata that is a list', [text('SKILL.md', '---\nname: a\ndescription: d\nmetadata: [1]\n---\n')], /metadata: expected a mapping/],
  ])('refuses %s in SKILL.md', async (_label, entries, message) => {
    const pkg = await readPackage(entries);
    expect(pkg.validation.ok).toBe(false);
    expect(pkg.validation.errors.map((e) => e.message).join('\n')).toMatch(message);
  });

  it('takes names relative to the skill folder when every file is inside it with its SKILL.md', () => {
    const paths = (es: PackageEntry[]) => withinFolder(es).map((e) => e.path);
    expect(paths([text('my-skill/SKILL.md', SKILL), text('my-skill/scripts/a.sh', 'x')])).toEqual(['SKILL.md', 'scripts/a.sh']);
    expect(paths([text('SKILL.md', SKILL), text('my-skill/SKILL.md', SKILL)])).toEqual(['SKILL.md', 'my-skill/SKILL.md']);
    expect(paths([text('a/SKILL.md', SKILL), text('b/x.md', 'x')])).toEqual(['a/SKILL.md', 'b/x.md']);
    expect(paths([text('../SKILL.md', SKILL), text('../x.md', 'x')])).toEqual(['../SKILL.md', '../x.md']);
  });
});
