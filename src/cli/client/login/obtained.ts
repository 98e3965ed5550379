import { ApiError, NetworkError, type Api } from '../http.ts';
import { authError, failure } from '../exit.ts';
import { isTenantKey } from '../mask.ts';
import type { Output } from '../output.ts';

/** What a login flow hands back: the key, and what the server said about it when it minted it. */
export interface ObtainedKey {
  apiKey: string;
  keyId: string | null;
  role: string | null;
  org: string | null;
}

/**
 * Every flow ends here before anything is saved: a non-`ao_` key draws a warning, and GET /api/profiles must accept
 * the key (a refusal is exit 3 and nothing is written).
 */
export async function verifyKey(api: Api, out: Output, key: ObtainedKey): Promise<void> {
  if (!key.apiKey.startsWith('ao_')) out.log.warn('the key does not start with ao_: it is not an svc tenant key; using it anyway');
  else if (!isTenantKey(key.apiKey)) out.log.warn('the key does not look like ao_<env>_<random>; using it anyway');
  try {
    await api.request('GET', '/api/profiles?limit=1', { key: key.apiKey, timeoutMs: 15_000 });
  } catch (err) {
    if (err instanceof ApiError && (err.status === 401 || err.status === 403)) throw authError(`the key was rejected by ${api.baseUrl}: ${err.message}`, 'nothing was saved');
    if (err instanceof NetworkError) throw failure(`${err.message}; nothing was saved`);
    if (err instanceof ApiError) throw failure(`could not verify the key (${err.status}: ${err.message}); nothing was saved`);
    throw err;
  }
}
