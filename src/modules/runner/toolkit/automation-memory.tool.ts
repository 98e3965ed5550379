import { z } from 'zod';
import { defineTool, ToolFailure } from './tool.ts';

/**
 * `automation_memory`: rewrites the memory note of the automation whose firing this run is, as the run's tenant (run
 * token). The note (at most 8 KB) is given to every later firing with its prompt, so an automation learns across
 * firings. A run that is no firing gets the conductor's 404 as the tool's failure.
 */
export const automationMemoryTool = defineTool({
  name: 'automation_memory',
  description: 'Replace the memory note of the automation running you (at most 8 KB; an empty body clears it). The next firing receives it with its prompt.',
  input: z.object({ body: z.string().max(8192) }),
  scope: 'tenant',
  capability: 'automations.memory',
  async run(i, ctx) {
    const token = ctx.session.runToken;
    if (!token) throw new ToolFailure('automation_memory needs a run started by the conductor (this session has no run token)');
    if (!ctx.conductor) throw new ToolFailure('automation_memory is unavailable: this runner has no conductor configured (SVC_CONDUCTOR_URL)');
    return ctx.conductor.writeAutomationMemory(token, i, ctx.signal);
  },
  text: (m: { body: string; updatedAt: string }) => `memory note saved (${Buffer.byteLength(m.body, 'utf8')} bytes) at ${m.updatedAt}`,
});
