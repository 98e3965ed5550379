import { describe, expect, it } from 'vitest';
import type { CatalogEntry } from './mcp-catalog.ts';
import type { CapabilityContextSavings } from '../../../../contracts/run-event.ts';
import { applyAllowlist, buildToolSet, planTools, searchCatalog, META_TOOL_THRESHOLD } from './toolset.ts';

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

  it('reports dynamic loading past the threshold: the decision and the context it saves once, a span per call_tool', async () => {
    expect(planTools([entry('echo')]).opening).toEqual([]); // offered directly: nothing to report
    const plan = planTools(Array.from({ length: META_TOOL_THRESHOLD + 1 }, (_, i) => entry(`tool_${i}`)));
    expect(plan.opening.map((e) => e.type)).toEqual(['capability_decision', 'capability_context_savings']);
    expect(plan.opening[0].capability).toMatchObject({ strategy: 'dynamic', catalogSize: META_TOOL_THRESHOLD + 1, threshold: META_TOOL_THRESHOLD, offered: ['search_tools', 'call_tool'] });
    const savings = plan.opening[1].capability as CapabilityContextSavings;
    expect(savings.catalogTools).toBe(META_TOOL_THRESHOLD + 1);
    expect(savings.savedBytes).toBe(savings.catalogSchemaBytes - savings.offeredSchemaBytes);
    expect(savings.savedBytes).toBeGreaterThan(0);
    expect(savings.estimatedTokensSaved).toBe(Math.ceil(savings.savedBytes / 4));

    const call = (name: string, toolCallId: string) => (plan.tools.call_tool as any).execute({ name, arguments: { n: 1 } }, { toolCallId, messages: [] });
    expect(await call('tool_3', 'call_1')).toEqual({ content: [{ type: 'text', text: 'tool_3 {"n":1}' }] });
    expect(plan.takeSpan('call_1')).toMatchObject({ type: 'capability_span', toolCallId: 'call_1', toolName: 'call_tool', capability: { toolCallId: 'call_1', tool: 'tool_3', found: true, isError: false } });
    expect(plan.takeSpan('call_1')).toBeUndefined(); // taken once
    await call('no_such_tool', 'call_2');
    expect(plan.takeSpan('call_2')).toMatchObject({ capability: { tool: 'no_such_tool', found: false, isError: true } });
  });
});
