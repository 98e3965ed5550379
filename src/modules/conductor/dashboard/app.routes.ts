import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Hono, type Context } from 'hono';
import { DASHBOARD_UI_DIR, packageRequire } from '../../../shared/package-root.ts';
import { escape, pageHeaders } from './html.ts';
import type { SessionCodec } from './session.ts';
import { signInUrl } from './sign-in.routes.ts';

/**
 * The dashboard app: one HTML shell for every page under `/dashboard` (the pages are Preact components, written with
 * htm's tagged templates so no build step is needed), and its assets served by the conductor itself from this
 * folder's `ui/` and from node_modules (Preact, htm, uPlot): nothing is fetched from another origin at run time.
 */
const UI_DIR = DASHBOARD_UI_DIR;
const fromPackage = (specifier: string, file: string) => join(dirname(packageRequire.resolve(specifier)), file);

/** Asset name → file. The vendor modules are named in the import map, so the UI imports them by bare name. */
function assetFiles(): Map<string, string> {
  const files = new Map<string, string>([
    ['preact.mjs', fromPackage('preact', 'preact.module.js')],
    ['preact-hooks.mjs', fromPackage('preact/hooks', 'hooks.module.js')],
    ['htm.mjs', fromPackage('htm', 'htm.module.js')],
    ['uplot.mjs', fromPackage('uplot', 'uPlot.esm.js')],
    ['uplot.css', fromPackage('uplot', 'uPlot.min.css')],
  ]);
  for (const name of readdirSync(UI_DIR)) if (/^[a-z0-9-]+\.(js|css)$/.test(name)) files.set(name, join(UI_DIR, name));
  return files;
}

const IMPORT_MAP = JSON.stringify({
  imports: { preact: '/dashboard/assets/preact.mjs', 'preact/hooks': '/dashboard/assets/preact-hooks.mjs', htm: '/dashboard/assets/htm.mjs', uplot: '/dashboard/assets/uplot.mjs' },
});

function shell(c: Context, csrf: string): Response {
  const nonce = randomBytes(16).toString('base64');
  pageHeaders(c, [`script-src 'self' 'nonce-${nonce}'`, "style-src 'self' 'unsafe-inline'", "connect-src 'self'", "img-src 'self' data:", "form-action 'self'"]);
  return c.html(`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>svc dashboard</title><meta name="csrf-token" content="${escape(csrf)}"><link rel="icon" href="data:,">
<link rel="stylesheet" href="/dashboard/assets/uplot.css"><link rel="stylesheet" href="/dashboard/assets/app.css">
<script type="importmap" nonce="${nonce}">${IMPORT_MAP}</script>
</head><body><div id="app"><noscript>The svc dashboard needs JavaScript.</noscript></div>
<script type="module" src="/dashboard/assets/main.js"></script></body></html>`);
}

const TYPES: Record<string, string> = { js: 'text/javascript; charset=utf-8', mjs: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8' };

export function appRoutes(deps: { sessions: SessionCodec }): Hono {
  let files: Map<string, string> | undefined; // resolved on the first asset asked for, not at every boot
  const cache = new Map<string, { body: Buffer; etag: string }>();
  const page = async (c: Context) => {
    if (!(await deps.sessions.open(c))) return c.redirect(signInUrl(c), 303);
    return shell(c, deps.sessions.csrf(c));
  };
  return new Hono()
    .get('/assets/:name', (c) => {
      const name = c.req.param('name');
      const file = (files ??= assetFiles()).get(name);
      if (!file) return c.text('not found', 404);
      let asset = cache.get(name);
      if (!asset) {
        const body = readFileSync(file);
        cache.set(name, (asset = { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` }));
      }
      // revalidated on every load (no-cache) and answered 304 while unchanged, so an upgrade is picked up at once
      c.header('Cache-Control', 'no-cache');
      c.header('ETag', asset.etag);
      c.header('X-Content-Type-Options', 'nosniff');
      if (c.req.header('if-none-match') === asset.etag) return c.body(null, 304);
      c.header('Content-Type', TYPES[name.slice(name.lastIndexOf('.') + 1)]!);
      return c.body(new Uint8Array(asset.body));
    })
    .get('/', page)
    .get('/*', page);
}
