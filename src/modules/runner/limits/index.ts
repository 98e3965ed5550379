/** Sandbox limits: what an agent's commands, stdio MCP servers and sandbox workers may consume, enforced by the kernel. */
export { createLimiter, type ExitFacts, type Jail, type Limiter, type LimiterOptions, type Usage, type Verdict } from './limiter.ts';
export { cgroupMounts, cgroupV1, cgroupV2, ownCgroups, type CgroupDriver, type Group } from './cgroups.ts';
