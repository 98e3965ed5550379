import { automationMemoryTool } from './automation-memory.tool.ts';
import { delegateTool } from './delegate.tool.ts';
import { runCommandTool } from './exec.tool.ts';
import { fsEdit, fsList, fsRead, fsSearch, fsWrite } from './fs.tools.ts';
import { notifyTool } from './notify.tool.ts';
import { memoryTool } from './memory.tool.ts';
import { memorySearchTool } from './memory-search.tool.ts';
import { describeZodIssue, specOf, type ToolDef } from './tool.ts';

/**
 * The platform tools with their zod schemas, in the order of TOOL_NAMES (contracts/toolkit.ts). Loaded by the toolkit
 * on first use, not at boot: the schemas and zod cost a runner memory it needs only once an agent uses a tool.
 */
export const TOOLS: readonly ToolDef[] = [fsRead, fsWrite, fsEdit, fsList, fsSearch, runCommandTool, delegateTool, notifyTool, automationMemoryTool, memoryTool, memorySearchTool];
export const BY_NAME = new Map(TOOLS.map((t) => [t.name as string, t]));
export const SPECS = TOOLS.map(specOf);
export { describeZodIssue };
