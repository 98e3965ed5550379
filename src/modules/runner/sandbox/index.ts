/** The command sandbox (bubblewrap): a spec in, a contained process out. */
export { createSandbox, SANDBOX_FIX, type Sandbox, type SandboxOptions } from './sandbox.ts';
export { bwrapInvocation, type BwrapInvocation } from './bwrap.ts';
export type { MountSource, SandboxMount, SandboxSpec, SandboxStatus } from './spec.ts';
