/** The agent-worker module: HTTP surface for LLM inference (`general`, `runtime_a`, `runtime_b`). */
export { createWorker, type Worker, type WorkerDeps } from './worker.ts';
export type { WorkerRuntime, StateBundle } from './runtime.ts';
