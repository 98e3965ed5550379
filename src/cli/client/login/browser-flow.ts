import { randomBytes } from 'node:crypto';
import type { ClientEnv } from '../env.ts';
import { authError, failure, whenInterrupted } from '../exit.ts';
import type { Output } from '../output.ts';
import { readSecret } from '../prompt.ts';
import { startLoopback } from './loopback.ts';
import type { ObtainedKey } from './obtained.ts';
import { openBrowser } from './open-browser.ts';

export const LOGIN_WAIT_MS = 5 * 60_000;

/**
 * Browser login: listen on 127.0.0.1, open `<dashboard>/cli-auth?port=…&state=…&label=…`, and wait up to five minutes
 * for the dashboard to post the key back. In a terminal a pasted key is accepted too, and on timeout a masked paste
 * prompt follows; in a script the timeout is a failure.
 */
export async function browserFlow(out: Output, env: ClientEnv, opts: { dashboardUrl: string; label: string }): Promise<ObtainedKey> {
  const state = randomBytes(24).toString('base64url');
  const loopback = await startLoopback(state);
  const dispose = whenInterrupted(() => loopback.close());
  const url = `${opts.dashboardUrl}/cli-auth?port=${loopback.port}&state=${state}&label=${encodeURIComponent(opts.label)}`;
  const paste = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  try {
    out.log.info(`Opening ${url}`);
    out.log.info('If no browser opens, visit that URL, sign in and approve the login.');
    openBrowser(url, env);
    const waits: Array<Promise<ObtainedKey | 'timeout'>> = [
      loopback.result.then((cb) => {
        if (!cb.ok) throw authError(cb.error === 'access_denied' ? 'the login was denied in the browser' : `the browser login failed: ${cb.error}`);
        return { apiKey: cb.apiKey, keyId: cb.keyId, role: cb.role, org: cb.org };
      }),
      new Promise((r) => (timer = setTimeout(() => r('timeout'), env.loginWaitMs ?? LOGIN_WAIT_MS))),
    ];
    if (env.stdinTTY) waits.push(readSecret('Or paste an API key: ', { signal: paste.signal }).then((k) => ({ apiKey: k, keyId: null, role: null, org: null })));
    const got = await Promise.race(waits);
    if (got !== 'timeout') return got;
    if (!env.stdinTTY) throw failure('timed out waiting for the browser login', 'run `svc auth login --headless` for the device flow, or `--with-token`');
    paste.abort();
    const key = await readSecret('Timed out waiting for the browser. Paste an API key: ');
    return { apiKey: key, keyId: null, role: null, org: null };
  } finally {
    paste.abort();
    clearTimeout(timer);
    dispose();
    await loopback.close();
  }
}
