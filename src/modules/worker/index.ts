/** The agent-worker module: HTTP surface for LLM inference (`general`, `runtime_a`, `runtime_b`), and its outbound client mode. */
export { createWorker, type Worker, type WorkerDeps } from './worker.ts';
export { startOutboundWorker, OutboundConfigError, type OutboundWorker } from './outbound.ts';
export type { WorkerRuntime, StateBundle } from './runtime.ts';
