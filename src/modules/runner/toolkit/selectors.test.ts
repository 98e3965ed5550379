import { describe, expect, it } from 'vitest';
import type { PoolSpec } from '../../../contracts/runner.wire.ts';
import { selectTools } from '../../../contracts/toolkit.ts';
import { workerAllowlist } from '../runs/runs.service.ts';
import { delegationProblem } from './delegate.tool.ts';

describe('tool selectors', () => {
  it('reads an empty or absent list as the safe default: the file tools only', () => {
    const safe = ['fs_read', 'fs_write', 'fs_edit', 'fs_list', 'fs_search'];
    expect([...selectTools(undefined)]).toEqual(safe);
    expect([...selectTools([])]).toEqual(safe);
    expect([...selectTools(['@default'])]).toEqual(safe);
  });

  it('unions bundles and tool names, and selects nothing for unknown ones', () => {
    expect([...selectTools(['@files-read', 'run_command', '@nope', 'ext__search'])].sort()).toEqual(['fs_list', 'fs_read', 'fs_search', 'run_command']);
    expect([...selectTools(['@all'])].sort()).toEqual(['automation_memory', 'delegate', 'fs_edit', 'fs_list', 'fs_read', 'fs_search', 'fs_write', 'notify', 'run_command']);
  });

  it('spells bundles out for the worker only when the list also names tools', () => {
    expect(workerAllowlist(undefined)).toBeUndefined();
    expect(workerAllowlist(['@files'])).toEqual(['@files']);
    expect(workerAllowlist(['@exec', 'ext__search'])).toEqual(['ext__search', 'run_command']);
  });

  it('adds the memory tools exactly when the profile mounts memory stores, whatever its selectors say', () => {
    expect([...selectTools(['@all', 'memory'])]).not.toContain('memory');
    expect([...selectTools(['@files-read'], true)]).toEqual(['fs_read', 'fs_list', 'fs_search', 'memory', 'memory_search']);
    expect([...selectTools(['@none'], true)]).toEqual(['memory', 'memory_search']);
    // a worker allowlist of plain names must not hide them
    expect(workerAllowlist(['fs_read', 'ext__search'], true)).toEqual(['fs_read', 'ext__search', 'memory', 'memory_search']);
  });
});

describe('delegation rule', () => {
  const pools: PoolSpec[] = [
    { name: 'research', members: [{ profile: 'lead', role: 'lead' }, { profile: 'scout' }] },
    { name: 'ops', members: [{ profile: 'lead' }, { profile: 'deployer' }] },
    { name: 'elsewhere', members: [{ profile: 'stranger' }] },
  ];

  it('allows a profile of any pool the caller is in', () => {
    expect(delegationProblem(pools, 'lead', 'scout')).toBeUndefined();
    expect(delegationProblem(pools, 'lead', 'deployer')).toBeUndefined();
    expect(delegationProblem(pools, 'scout', 'lead')).toBeUndefined();
  });

  it('refuses a profile outside the caller\'s pools, naming them', () => {
    expect(delegationProblem(pools, 'scout', 'deployer')).toBe('profile deployer is not in a pool with scout (pools of scout: research)');
    expect(delegationProblem(pools, 'lead', 'stranger')).toBe('profile stranger is not in a pool with lead (pools of lead: research, ops)');
  });

  it('refuses self-delegation and callers in no pool', () => {
    expect(delegationProblem(pools, 'scout', 'scout')).toBe('profile scout cannot delegate to itself');
    expect(delegationProblem(pools, 'loner', 'scout')).toBe('profile loner is in no pool; delegation is only between members of one pool');
  });
});
