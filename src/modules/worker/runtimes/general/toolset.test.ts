import { describe, expect, it } from 'vitest';
import type { CatalogEntry } from './mcp-catalog.ts';
import { applyAllowlist, buildToolSet, searchCatalog, META_TOOL_THRESHOLD } from './toolset.ts';

const entry = (name: string, description = `does ${name}`): CatalogEntry => ({
  name,
  description,
  inputSchema: { type: 'object', properties: {} },
  call: async (args) => ({ content: [{ type: 'text', text: `${name} ${JSON.stringify(args)}` }] }),
});

describe('general runtime tool set', () => {
  it('exposes a small catalog directly, by name', () => {
    expect(Object.keys(buildToolSet([entry('echo'), entry('ext__read')]))).toEqual(['echo', 'ext__read']);
  });

  it('exposes only search_tools and call_tool past the threshold', () => {
    const many = Array.from({ length: META_TOOL_THRESHOLD + 1 }, (_, i) => entry(`tool_${i}`));
    expect(Object.keys(buildToolSet(many)).sort()).toEqual(['call_tool', 'search_tools']);
  });

  it('filters by the profile allowlist and ignores runner selectors', () => {
    const all = [entry('echo'), entry('write'), entry('ext__read')];
    expect(applyAllowlist(all, ['echo', 'ext__read']).map((e) => e.name)).toEqual(['echo', 'ext__read']);
    expect(applyAllowlist(all, ['@default']).map((e) => e.name)).toEqual(['echo', 'write', 'ext__read']);
    expect(applyAllowlist(all, []).length).toBe(3);
  });

  it('ranks search results by matching words in names and descriptions', () => {
    const found = searchCatalog([entry('read_file', 'read a file'), entry('write_file', 'write a file'), entry('echo')], 'read file');
    expect(found.map((e) => e.name)).toEqual(['read_file', 'write_file']);
  });
});
