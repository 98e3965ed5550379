/** Run hooks (runFinished, the pre-run gate): see run-hooks.ts. */
export { createRunHooks, RUN_FINISHED, type RunHooks, type RunFinished, type RunFinishedHandler, type RunGate, type RunGateContext, type RunRecorded, type Ahead } from './run-hooks.ts';
export { readRunFinished, toRunFinished, usageSums, type RunFinishedRow } from './run-finished.repo.ts';
