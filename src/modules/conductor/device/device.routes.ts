import { doc } from '../../../shared/route-doc.ts';
import { Hono } from 'hono';
import * as v from 'valibot';
import { readJson } from '../../../shared/http.ts';
import { createDeviceCode, pollDeviceToken, type DeviceDeps } from './device.service.ts';

const CodeBody = v.object({ label: v.optional(v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(200)), 'svc-cli') });
const DeviceCode = v.object({
  deviceCode: v.pipe(v.string(), v.description('What the CLI polls the token with; keep it secret')),
  userCode: v.pipe(v.string(), v.description('What the person confirms in the dashboard')),
  verificationUri: v.string(),
  verificationUriComplete: v.string(),
  expiresIn: v.pipe(v.number(), v.description('Seconds')),
  interval: v.pipe(v.number(), v.description('Seconds between polls')),
});
const DeviceToken = v.object({ apiKey: v.string(), keyId: v.string(), role: v.string(), org: v.pipe(v.string(), v.description('The tenant')) });
const TokenBody = v.object({ deviceCode: v.pipe(v.string(), v.minLength(1), v.maxLength(200)) });

/** The public origin the dashboard is served at, as the caller reached it (honouring a proxy's forwarded headers). */
export function requestOrigin(req: { url: string; header(name: string): string | undefined }): string {
  const url = new URL(req.url);
  const proto = req.header('x-forwarded-proto')?.split(',')[0].trim() || url.protocol.replace(':', '');
  const host = req.header('x-forwarded-host')?.split(',')[0].trim() || url.host;
  return `${proto}://${host}`;
}

/**
 * `POST /api/device/code` and `POST /api/device/token`: unauthenticated by design (the CLI has no key yet). Mounted on
 * the conductor's top-level app before the authenticated `/api`.
 */
export function deviceApiRoutes(deps: DeviceDeps): Hono {
  return new Hono()
    .post('/code', doc({ summary: 'Start a device login', description: 'Starts a login for a device without a key (the CLI): answers a device code to poll with and a user code the person confirms in the dashboard. No credentials.', body: CodeBody, response: DeviceCode, public: true, errors: [503] }), async (c) => {
      const body = (await c.req.text()).trim() === '' ? { label: 'svc-cli' } : await readJson(c, CodeBody);
      return c.json(await createDeviceCode(deps, { label: body.label, origin: requestOrigin(c.req) }));
    })
    .post('/token', doc({ summary: 'Poll a device login', description: 'Exchanges the device code for an API key once the person approved the login. Until then a 400 with `error: authorization_pending` (or `expired_token`, `access_denied`, `invalid_grant`), as OAuth device flow clients expect. No credentials.', body: TokenBody, response: DeviceToken, public: true }), async (c) => c.json(await pollDeviceToken(deps, (await readJson(c, TokenBody)).deviceCode)));
}
