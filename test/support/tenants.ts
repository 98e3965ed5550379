import { insertKey, type Role } from '../../src/modules/conductor/identity/index.ts';
import { startTestSvc, type TestSvc } from './svc.ts';

/**
 * An instance whose tenant `default` is the operator tenant, with a known pepper so tests can mint keys of any role
 * and tenant through the identity module itself (no API demotes a role), as an attacker's own key would be.
 */
export const PEPPER = 'tenants-test-pepper-0123456789';

export async function startOperatorSvc(env: Record<string, string | undefined> = {}, role = 'all'): Promise<TestSvc> {
  return startTestSvc({ DATABASE_URL: 'memory', AGENT_ORC_ADMIN_TENANT: 'default', AGENT_API_KEY_PEPPER: PEPPER, ...env }, role);
}

/** A key of `role` in tenant `tenantId`; the tenant is created through the operator routes when it does not exist. */
export async function keyOf(svc: TestSvc, tenantId: string, role: Role = 'owner'): Promise<string> {
  if (tenantId !== 'default') {
    const res = await svc.api('/api/tenants', { method: 'POST', json: { id: tenantId, name: tenantId } });
    if (res.status !== 201 && res.status !== 409) throw new Error(`creating tenant ${tenantId}: ${res.status} ${await res.text()}`);
  }
  const db = svc.server.built.database!.db;
  return (await insertKey({ db, pepper: PEPPER, keyEnv: 'test' }, tenantId, { name: role, role, createdBy: null, expiresAt: null })).token;
}
