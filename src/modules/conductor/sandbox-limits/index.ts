/** Sandbox limits on the conductor: tenants' ceilings, the 400s for limits above a ceiling, what runners are sent. */
export { createSandboxLimits, limitsForRunner, type SandboxLimitsService, type TenantLimitsView } from './sandbox-limits.service.ts';
export { sandboxLimitsFeature } from './sandbox-limits.feature.ts';
export { runnerLimitsCheck, runnerLimitsOf } from './runner-limits.ts';
