import { describe, expect, it } from 'vitest';
import { permissionFor, permissionsProblem } from './permissions.ts';

describe('tool permission policies', () => {
  it('allows what no selector covers', () => {
    expect(permissionFor(undefined, 'run_command')).toEqual({ permission: 'allow', selector: undefined });
    expect(permissionFor({ fs_write: 'deny' }, 'run_command')).toEqual({ permission: 'allow', selector: undefined });
  });

  it('lets the most specific selector win: a tool name, then the smallest bundle, then *', () => {
    const policy = { '*': 'deny', '@files': 'ask', '@files-read': 'allow', fs_search: 'deny' } as const;
    expect(permissionFor(policy, 'fs_search')).toEqual({ permission: 'deny', selector: 'fs_search' });
    expect(permissionFor(policy, 'fs_read')).toEqual({ permission: 'allow', selector: '@files-read' });
    expect(permissionFor(policy, 'fs_write')).toEqual({ permission: 'ask', selector: '@files' });
    expect(permissionFor(policy, 'notify')).toEqual({ permission: 'deny', selector: '*' });
    expect(permissionFor({ '@exec': 'deny', run_command: 'allow' }, 'run_command').permission).toBe('allow');
  });

  it('takes the strictest of equally specific selectors (@default and @files hold the same tools)', () => {
    expect(permissionFor({ '@default': 'allow', '@files': 'ask' }, 'fs_edit')).toEqual({ permission: 'ask', selector: '@files' });
  });

  it('names the first selector or value it cannot enforce', () => {
    expect(permissionsProblem(undefined, {})).toBeUndefined();
    expect(permissionsProblem({ run_command: 'ask', '@exec': 'deny', '*': 'allow' }, {})).toBeUndefined();
    expect(permissionsProblem(['run_command'], {})).toBe('permissions: expected an object mapping tool selectors to allow, ask or deny');
    expect(permissionsProblem({ run_command: 'sometimes' }, {})).toBe('permissions.run_command: expected allow, ask or deny');
    expect(permissionsProblem({ 'mcp:github/*': 'allow' }, {})).toMatch(/^permissions\.mcp:github\/\*: MCP server tools do not pass/);
    expect(permissionsProblem({ '*': 'ask' }, { mcpServers: [{ name: 'gh' }] })).toMatch(/^permissions\.\*: ask cannot cover the profile's MCP servers \(gh\)/);
    expect(permissionsProblem({ '*': 'allow' }, { mcpServers: [{ name: 'gh' }] })).toBeUndefined();
  });
});
