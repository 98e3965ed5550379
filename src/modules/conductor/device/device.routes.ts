import { doc } from '../../../shared/route-doc.ts';
import { Hono } from 'hono';
import * as v from 'valibot';
import { readJson } from '../../../shared/http.ts';
import { createDeviceCode, pollDeviceToken, type DeviceDeps } from './device.service.ts';

const CodeBody = v.object({ label: v.optional(v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(200)), 'svc-cli') });
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
    .post('/code', doc({ body: CodeBody }), async (c) => {
      const body = (await c.req.text()).trim() === '' ? { label: 'svc-cli' } : await readJson(c, CodeBody);
      return c.json(await createDeviceCode(deps, { label: body.label, origin: requestOrigin(c.req) }));
    })
    .post('/token', doc({ body: TokenBody }), async (c) => c.json(await pollDeviceToken(deps, (await readJson(c, TokenBody)).deviceCode)));
}
