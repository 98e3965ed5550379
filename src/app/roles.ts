import type { RoleName } from '../config/config.ts';

/**
 * The roles table: which module each role mounts and what it needs. Nothing else in the program branches on a role
 * name; `buildApp` reads this table.
 */
export interface RoleSpec {
  mounts: readonly string[];
  needsDatabase: boolean;
  description: string;
}

export const ROLES: Readonly<Record<RoleName, RoleSpec>> = {
  conductor: { mounts: ['/api/*', '/v1/*'], needsDatabase: true, description: 'control plane: tenants, keys, profiles, runs, events' },
  runner: { mounts: ['/runner/*'], needsDatabase: false, description: 'live sessions, toolkit, MCP, VFS, worker leases' },
  worker: { mounts: ['/health', '/run', '/state/*'], needsDatabase: false, description: 'LLM inference for general, runtime_a, runtime_b' },
};

export function needsDatabase(roles: readonly RoleName[]): boolean {
  return roles.some((r) => ROLES[r].needsDatabase);
}
