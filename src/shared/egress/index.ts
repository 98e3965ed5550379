/**
 * Egress to URLs tenants supply: the address policy (what may be called, judged as written) and the guarded fetcher
 * (judged again at connect time, on every address a name resolves to). Webhooks, notifications, MCP servers and JWKS
 * documents all go through it; so should any later tenant-supplied URL.
 */
export { AddressRefused, checkUrl, hostProblem, POLICY_NOTE, PRIVATE_ADDRESSES, refusedAddress, type PrivateAddresses } from './address-policy.ts';
export { createGuardedFetch, guardedFetch, resolvedProblem, type GuardedFetch, type GuardOptions, type Resolve } from './guarded-fetch.ts';
