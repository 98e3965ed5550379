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
    expect(permissionsProblem({ '*': 'allow' }, { mcpServers: [{ name: 'gh' }] })).toBeUndefined();
  });

  it('accepts mcp:<server>/<tool> selectors, with * globs, for the profile\'s own MCP servers only', () => {
    const gh = { mcpServers: [{ name: 'gh' }, { name: 'docs' }] };
    expect(permissionsProblem({ 'mcp:gh/*': 'ask', 'mcp:gh/create_*': 'deny', 'mcp:docs/search': 'allow', '*': 'deny' }, gh)).toBeUndefined();
    expect(permissionsProblem({ 'mcp:github/*': 'ask' }, gh)).toBe("permissions.mcp:github/*: github is not one of the profile's MCP servers (gh, docs)");
    expect(permissionsProblem({ 'mcp:github/*': 'ask' }, {})).toBe("permissions.mcp:github/*: github is not one of the profile's MCP servers (it has none)");
    expect(permissionsProblem({ 'mcp:gh': 'ask' }, gh)).toBe('permissions.mcp:gh: expected mcp:<server>/<tool>, where <tool> may use * (mcp:github/*)');
    expect(permissionsProblem({ 'mcp:gh/': 'ask' }, gh)).toMatch(/^permissions\.mcp:gh\/: expected mcp:<server>\/<tool>/);
  });

  it('resolves an MCP tool: exact selector, then the most literal glob, then *; bundles never cover it', () => {
    const policy = { '*': 'ask', '@default': 'deny', 'mcp:gh/*': 'allow', 'mcp:gh/create_*': 'deny', 'mcp:gh/create_issue': 'ask' } as const;
    expect(permissionFor(policy, 'mcp:gh/create_issue')).toEqual({ permission: 'ask', selector: 'mcp:gh/create_issue' });
    expect(permissionFor(policy, 'mcp:gh/create_pr')).toEqual({ permission: 'deny', selector: 'mcp:gh/create_*' });
    expect(permissionFor(policy, 'mcp:gh/list_issues')).toEqual({ permission: 'allow', selector: 'mcp:gh/*' });
    expect(permissionFor(policy, 'mcp:docs/search')).toEqual({ permission: 'ask', selector: '*' });
    expect(permissionFor({ '@default': 'deny' }, 'mcp:docs/search')).toEqual({ permission: 'allow', selector: undefined });
    // a glob's literal characters are literal: `.` is not "any character"
    expect(permissionFor({ 'mcp:gh/a.b': 'deny', 'mcp:gh/a.*': 'ask' }, 'mcp:gh/axb').permission).toBe('allow');
    // a toolkit tool's name still beats every other selector
    expect(permissionFor({ ...policy, run_command: 'allow' }, 'run_command')).toEqual({ permission: 'allow', selector: 'run_command' });
  });
});
