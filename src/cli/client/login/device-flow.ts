import { setTimeout as sleep } from 'node:timers/promises';
import { ApiError, NetworkError, type Api } from '../http.ts';
import { authError, failure } from '../exit.ts';
import type { Output } from '../output.ts';
import type { ObtainedKey } from './obtained.ts';

interface DeviceCode {
  deviceCode: string;
  userCode: string;
  verificationUri: string;
  verificationUriComplete: string;
  expiresIn: number;
  interval: number;
}

/**
 * Device login: POST /api/device/code, show the code (stderr; with --json also the `device_code` NDJSON line on
 * stdout), then poll POST /api/device/token until approved, denied (exit 3) or expired (exit 1). `pollMs` overrides the
 * server's interval (tests only).
 */
export async function deviceFlow(api: Api, out: Output, opts: { label: string; pollMs?: number; signal?: AbortSignal }): Promise<ObtainedKey> {
  let code: DeviceCode;
  try {
    code = (await api.request<DeviceCode>('POST', '/api/device/code', { anonymous: true, body: { label: opts.label } })).data;
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) throw failure(`${api.baseUrl} does not support device login`, 'use `svc auth login --with-token <key>`');
    throw err;
  }
  if (out.json) {
    out.line({ event: 'device_code', userCode: code.userCode, verificationUri: code.verificationUri, verificationUriComplete: code.verificationUriComplete, expiresIn: code.expiresIn, interval: code.interval });
  }
  out.log.info(`To sign in, open ${code.verificationUri} and enter the code ${code.userCode}`);
  out.log.info(`(or open ${code.verificationUriComplete}); the code is valid for ${Math.round(code.expiresIn / 60) || 1} min`);

  let interval = opts.pollMs ?? code.interval * 1000;
  const deadline = Date.now() + code.expiresIn * 1000;
  let warned = false;
  for (;;) {
    await sleep(Math.max(0, Math.min(interval, deadline - Date.now())), undefined, { signal: opts.signal });
    try {
      const { data } = await api.request<{ apiKey: string; keyId: string; role: string; org: string }>('POST', '/api/device/token', { anonymous: true, body: { deviceCode: code.deviceCode } });
      return { apiKey: data.apiKey, keyId: data.keyId ?? null, role: data.role ?? null, org: data.org ?? null };
    } catch (err) {
      if (err instanceof ApiError) {
        const error = String((err.body as { error?: unknown })?.error ?? '');
        if (error === 'access_denied') throw authError('the login was denied');
        if (error === 'expired_token') throw failure('the device code expired before it was approved', 'run `svc auth login` again');
        if (error === 'slow_down') interval += 5000;
        else if (error !== 'authorization_pending') throw failure(`device login failed: ${err.message}`);
      } else if (err instanceof NetworkError) {
        if (!warned) out.log.warn(`${err.message}; still trying`);
        warned = true;
      } else throw err;
    }
    if (Date.now() >= deadline) throw failure('the device code expired before it was approved', 'run `svc auth login` again');
  }
}
