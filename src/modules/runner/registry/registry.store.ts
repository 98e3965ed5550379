/**
 * A per-tenant registry of named records (profiles, pools). The conductor broadcasts these to every runner; the
 * runner keeps them in memory and never shares them across tenants.
 */
export interface Registry<T extends { name: string }> {
  list(tenant: string): T[];
  get(tenant: string, name: string): T | undefined;
  /** Creates or replaces: the conductor sends the same call for create and update. */
  put(tenant: string, record: T): void;
  /** Idempotent: deleting an unknown name is not an error (a broadcast may reach a runner that never saw it). */
  delete(tenant: string, name: string): boolean;
}

export function createRegistry<T extends { name: string }>(): Registry<T> {
  const byTenant = new Map<string, Map<string, T>>();
  const scope = (tenant: string) => {
    let map = byTenant.get(tenant);
    if (!map) byTenant.set(tenant, (map = new Map()));
    return map;
  };
  return {
    list: (tenant) => [...(byTenant.get(tenant)?.values() ?? [])].sort((a, b) => a.name.localeCompare(b.name)),
    get: (tenant, name) => byTenant.get(tenant)?.get(name),
    // stored as a copy so later mutation of the caller's object cannot change what sessions snapshot
    put: (tenant, record) => void scope(tenant).set(record.name, structuredClone(record)),
    delete: (tenant, name) => byTenant.get(tenant)?.delete(name) ?? false,
  };
}
