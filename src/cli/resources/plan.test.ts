import { describe, expect, it } from 'vitest';
import { KINDS } from './kinds.ts';
import { diff, matches } from './plan.ts';

const [profile, pool, automation] = KINDS;

describe('apply diffs', () => {
  it('treats server defaults inside objects as no change', () => {
    expect(matches([{ profile: 'a' }], [{ profile: 'a', role: 'member' }])).toBe(true);
    expect(matches([{ profile: 'a' }], [{ profile: 'a' }, { profile: 'b' }])).toBe(false);
    expect(diff(pool, { name: 'p', members: [{ profile: 'a' }] }, { id: 'pool_1', name: 'p', members: [{ profile: 'a', role: 'member' }], pinned: true })).toEqual({});
  });

  it('names each changed field with its old and new value, computed fields aside', () => {
    expect(diff(automation, { name: 'n', prompt: 'b', cron: '0 6 * * *' }, { id: 'aut_1', name: 'n', prompt: 'a', cron: '0 6 * * *', status: 'active', timezone: 'UTC' })).toEqual({ prompt: { from: 'a', to: 'b' } });
  });

  it('counts a field a profile file leaves out as removed (profiles are replaced), but not for other kinds', () => {
    expect(diff(profile, { name: 'p', runtime: 'general' }, { id: 'prof_1', name: 'p', runtime: 'general', model: 'demo:echo', pinned: false })).toEqual({ model: { from: 'demo:echo', to: null } });
    expect(diff(pool, { name: 'p' }, { id: 'pool_1', name: 'p', description: 'kept' })).toEqual({});
  });
});
