import { describe, expect, it } from 'vitest';
import type { PoolSpec, ProfileSpec } from '../../../contracts/runner.wire.ts';
import { parseVirtualPath } from './paths.ts';
import { checkAccess, leaseMounts, rulesFor, type Access } from './policy.ts';

const profile = (fs?: Record<string, unknown>): ProfileSpec => ({ name: 'writer', runtime: 'general', ...(fs ? { fs } : {}) });
const can = (p: ProfileSpec, pools: PoolSpec[], path: string, access: Access) => {
  try {
    checkAccess(rulesFor(p, pools), parseVirtualPath(path), access);
    return true;
  } catch {
    return false;
  }
};

describe('filesystem policy', () => {
  it('gives a profile without fs policy all three mounts and an unrestricted lease', () => {
    expect(can(profile(), [], '/home/a', 'write')).toBe(true);
    expect(can(profile(), [], '/work/a', 'write')).toBe(true);
    expect(leaseMounts(profile())).toEqual([]);
  });

  it('hides mounts the profile does not allow and names them in the lease', () => {
    const p = profile({ allowedMounts: ['/work'] });
    expect(can(p, [], '/work/a', 'write')).toBe(true);
    expect(can(p, [], '/home/a', 'read')).toBe(false);
    expect(leaseMounts(p)).toEqual(['/work']);
  });

  it('lets read-only patterns refuse writes below them but not reads', () => {
    const p = profile({ readOnly: ['/home', '/work/inputs/**'] });
    expect(can(p, [], '/home/notes.md', 'read')).toBe(true);
    expect(can(p, [], '/home/notes.md', 'write')).toBe(false);
    expect(can(p, [], '/work/inputs/data.csv', 'write')).toBe(false);
    expect(can(p, [], '/work/outputs/data.csv', 'write')).toBe(true);
  });

  it('refuses a malformed fs policy instead of half-applying it', () => {
    expect(() => rulesFor(profile({ readonly: ['/home'] }), [])).toThrow(/invalid fs policy/);
    expect(() => rulesFor(profile({ allowedMounts: ['/etc'] }), [])).toThrow(/invalid fs policy/);
  });

  it('gives pool members their own pool area by default and nothing of other pools', () => {
    const pools: PoolSpec[] = [
      { name: 'team', members: [{ profile: 'writer' }] },
      { name: 'other', members: [{ profile: 'someone' }] },
    ];
    expect(can(profile(), pools, '/pool/team/draft.md', 'write')).toBe(true);
    expect(can(profile(), pools, '/pool/other/draft.md', 'read')).toBe(false);
    expect(can(profile(), [], '/pool/team/draft.md', 'read')).toBe(false);
  });

  it('applies pool read and write patterns with the {pool} placeholder', () => {
    const pools: PoolSpec[] = [
      { name: 'team', members: [{ profile: 'writer' }], fs: { read: ['/pool/*/published/**'], write: ['/pool/{pool}/drafts/**', 'outbox'] } },
      { name: 'other', members: [] },
    ];
    expect(can(profile(), pools, '/pool/team/drafts/a.md', 'write')).toBe(true);
    expect(can(profile(), pools, '/pool/team/outbox/a.md', 'write')).toBe(true);
    expect(can(profile(), pools, '/pool/team/published/a.md', 'write')).toBe(false);
    expect(can(profile(), pools, '/pool/other/published/a.md', 'read')).toBe(true);
    expect(can(profile(), pools, '/pool/other/private/a.md', 'read')).toBe(false);
  });
});
