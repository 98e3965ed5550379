/** The runner module's only door: the factory and its public types. */
export { createRunner, type Runner, type RunnerDeps } from './runner.ts';
export type { RunnerInfo } from '../../contracts/runner.wire.ts';
