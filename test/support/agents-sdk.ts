import OpenAI from 'openai';
import { insertKey, type Role } from '../../src/modules/conductor/identity/index.ts';
import { startTestSvc, type TestSvc } from './svc.ts';

/**
 * An svc instance for the agents-API tests, driven by the real `openai` 7.15.0 package, plus keys of other roles and
 * of a second organisation (minted through the identity module: no API demotes a role).
 */
export const PEPPER = 'agents-sdk-pepper-0123456789';
export const SECRETS_KEY = 'agents-sdk-secrets-key-0123456789';

export interface SdkSvc {
  svc: TestSvc;
  /** Owner of tenant `default`. */
  client: OpenAI;
  /** Another organisation's owner. */
  other: OpenAI;
  viewer: OpenAI;
  keys: { owner: string; other: string; viewer: string; member: string };
  /** An SDK client for any key. */
  sdk(key: string): OpenAI;
  stop(): Promise<void>;
}

export async function startSdkSvc(env: Record<string, string> = {}): Promise<SdkSvc> {
  const svc = await startTestSvc({ AGENT_API_KEY_PEPPER: PEPPER, SVC_SECRETS_KEY: SECRETS_KEY, AGENT_ORC_ADMIN_TENANT: 'default', ...env });
  const created = await svc.api('/api/tenants', { method: 'POST', json: { id: 'other-org', name: 'Other' } });
  if (created.status !== 201) throw new Error(`creating tenant other-org: ${created.status} ${await created.text()}`);
  const mint = async (tenantId: string, role: Role) =>
    (await insertKey({ db: svc.server.built.database!.db, pepper: PEPPER, keyEnv: 'test' }, tenantId, { name: role, role, createdBy: null, expiresAt: null })).token;
  const keys = { owner: svc.key, other: await mint('other-org', 'owner'), viewer: await mint('default', 'viewer'), member: await mint('default', 'member') };
  const sdk = (key: string) => new OpenAI({ baseURL: svc.url + '/v1', apiKey: key, maxRetries: 0 });
  return { svc, client: sdk(keys.owner), other: sdk(keys.other), viewer: sdk(keys.viewer), keys, sdk, stop: () => svc.stop() };
}

/** The raw JSON text of a /v1 call, to assert on exactly what went over the wire. */
export async function rawV1(svc: TestSvc, path: string, init: RequestInit & { key?: string; json?: unknown } = {}): Promise<{ status: number; text: string; json: any }> {
  const res = await svc.api('/v1' + path, init);
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, text, json };
}
