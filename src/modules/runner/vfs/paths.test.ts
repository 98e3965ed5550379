import { describe, expect, it } from 'vitest';
import { parseVirtualPath } from './paths.ts';

describe('virtual paths', () => {
  it.each([
    ['notes.txt', '/work/notes.txt'],
    ['./a/./b.txt', '/work/a/b.txt'],
    ['/work//deep///file', '/work/deep/file'],
    ['/home/profile.md', '/home/profile.md'],
    ['/pool/team/shared.md', '/pool/team/shared.md'],
    ['', '/work'],
    ['/', '/'],
    ['/work/100%.txt', '/work/100%.txt'],
    ['/work/...', '/work/...'],
  ])('reads %j as %s', (raw, virtual) => {
    expect(parseVirtualPath(raw).virtual).toBe(virtual);
  });

  it.each([
    ['a parent segment', '../x', /".." segments/],
    ['a parent segment deep inside', '/work/a/../../x', /".." segments/],
    ['a host path', '/etc/passwd', /not under a mount/],
    ['a look-alike mount', '/workspace/x', /not under a mount/],
    ['a NUL byte', '/work/a\u0000.txt', /control characters/],
    ['a backslash', '..\\x', /backslashes/],
    ['percent-encoded dots', '/work/%2e%2e/x', /percent-encoded/],
    ['a drive letter', 'C:/Windows', /drive letters/],
    ['a network path', '//server/share', /network paths/],
    ['a home shortcut', '~/x', /home shortcuts/],
    ['fullwidth dots', '/work/\uff0e\uff0e/x', /normalize/],
    ['a non-string', 42, /expected a string/],
  ])('refuses %s', (_label, raw, why) => {
    expect(() => parseVirtualPath(raw)).toThrow(why);
  });
});
