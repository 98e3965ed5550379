import { ConfigError } from './parse.ts';

/** The roles one svc process may run (SVC_ROLE or --role): what each mounts and needs is the roles table's (app/roles.ts). */
export const ROLE_NAMES = ['conductor', 'runner', 'worker'] as const;
export type RoleName = (typeof ROLE_NAMES)[number];

/** SVC_ROLE / --role: `all`, one role, or a comma list; in the table's order. */
export function parseRoles(raw: string): RoleName[] {
  const parts = raw.split(',').map((p) => p.trim()).filter(Boolean);
  if (parts.length === 0) throw new ConfigError('SVC_ROLE (--role)', 'one of all, conductor, runner, worker, or a comma list');
  const roles = new Set<RoleName>();
  for (const p of parts) {
    if (p === 'all') ROLE_NAMES.forEach((r) => roles.add(r));
    else if ((ROLE_NAMES as readonly string[]).includes(p)) roles.add(p as RoleName);
    else throw new ConfigError('SVC_ROLE (--role)', `got "${p}"; allowed: all, conductor, runner, worker, or a comma list`);
  }
  return ROLE_NAMES.filter((r) => roles.has(r));
}
