/**
 * What a general run needs beyond the worker's shell: the AI SDK and its providers, the MCP client, the tool set and
 * the turn loop. Loaded on a worker's first run (index.ts), so a server that has not run anything yet holds none of it.
 */
export { openToolCatalog } from './mcp-catalog.ts';
export { applySettings, envWithOverride, resolveModel } from './providers.ts';
export { applyAllowlist, buildToolSet, planTools } from './toolset.ts';
export { runTurn } from './turn.ts';
export { aiTelemetry } from './telemetry.ts';
