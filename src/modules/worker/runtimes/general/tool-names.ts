/** Provider tool names allow letters, digits, `_` and `-` (at most 64): one rule, shared with the runner. */
export { toolNameSafe } from '../../../../contracts/worker.ts';
