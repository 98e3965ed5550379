import type { Aggregator } from './models/model-ref.ts';

/** What the composition root tells the agents API (config `agents`, plus where workers reach this conductor). */
export interface AgentSettings {
  /** Operator-configured aggregators behind `svc/<name>/<model id>` (config `agents.aggregators`). */
  aggregators: Readonly<Record<string, Aggregator>>;
  keepAliveMs: number;
  /** How long a client-executed function call may wait for its tool_result (default 1 h). */
  turnDeadlineMs: number;
  /** Base URL at which workers reach this conductor (the function-tool endpoint). */
  selfUrl: string;
  version: string;
  /** The model providers whose credentials the server's own environment holds (`/api/providers` `serverKeySet`). */
  serverKeys: readonly string[];
  /** SVC_PRIVATE_ADDRESSES (config `privateAddresses`): whether agents' MCP servers may be on internal addresses; absent: allow. */
  privateAddresses?: 'allow' | 'deny';
}

export const DEFAULT_AGENT_SETTINGS: AgentSettings = { aggregators: {}, keepAliveMs: 15_000, turnDeadlineMs: 3_600_000, selfUrl: 'http://127.0.0.1:8080', version: '0.0.0', serverKeys: [] };
