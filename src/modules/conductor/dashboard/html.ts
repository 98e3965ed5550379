import { randomBytes } from 'node:crypto';
import type { Context } from 'hono';

/**
 * Server-rendered HTML for the dashboard's few pages: one layout, escaping, and the security headers every page
 * carries (no framing, no caching, no referrer off-site, scripts only by nonce, forms only to where we say).
 */
export function escape(value: unknown): string {
  return String(value ?? '').replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch]!);
}

const STYLE = `
  body { font: 15px/1.5 system-ui, sans-serif; background: #f6f7f9; color: #1d2330; margin: 0; }
  main { max-width: 460px; margin: 10vh auto; background: #fff; border: 1px solid #dde1e7; border-radius: 10px; padding: 28px 32px; }
  h1 { font-size: 20px; margin: 0 0 16px; }
  label { display: block; font-weight: 600; margin: 12px 0 4px; }
  input[type=text], input[type=password] { width: 100%; box-sizing: border-box; padding: 8px 10px; border: 1px solid #c4cad3; border-radius: 6px; font: inherit; }
  button { font: inherit; padding: 8px 16px; border-radius: 6px; border: 1px solid #2456d6; background: #2456d6; color: #fff; cursor: pointer; margin: 16px 8px 0 0; }
  button.secondary { background: #fff; color: #2456d6; }
  .error { color: #b3261e; } .muted { color: #5f6b7a; font-size: 13px; }
  dl { display: grid; grid-template-columns: max-content 1fr; gap: 4px 12px; } dt { color: #5f6b7a; } dd { margin: 0; font-family: ui-monospace, monospace; }
`;

export interface PageOptions {
  status?: number;
  /** Extra origins forms may post to (the CLI's loopback listener). */
  formAction?: string;
  /** Inline script, allowed by a per-response nonce. */
  script?: string;
}

/**
 * The headers of every dashboard HTML response: the page's Content-Security-Policy (`default-src 'none'`, no framing,
 * no base URI, then `directives`), and no framing, caching or sniffing.
 */
export function pageHeaders(c: Context, directives: string[]): void {
  c.header('Content-Security-Policy', ["default-src 'none'", ...directives, "frame-ancestors 'none'", "base-uri 'none'"].join('; '));
  c.header('X-Frame-Options', 'DENY');
  // same-origin, not no-referrer: our own form posts must carry a real Origin (the cross-site check refuses "null").
  c.header('Referrer-Policy', 'same-origin');
  c.header('Cache-Control', 'no-store');
  c.header('X-Content-Type-Options', 'nosniff');
}

export function page(c: Context, title: string, body: string, opts: PageOptions = {}): Response {
  const nonce = randomBytes(16).toString('base64');
  pageHeaders(c, ["style-src 'unsafe-inline'", `script-src 'nonce-${nonce}'`, `form-action 'self'${opts.formAction ? ' ' + opts.formAction : ''}`]);
  const script = opts.script ? `<script nonce="${nonce}">${opts.script}</script>` : '';
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(title)} · svc</title><style>${STYLE}</style></head><body><main>${body}</main>${script}</body></html>`;
  return c.html(html, (opts.status ?? 200) as 200);
}

export function hidden(fields: Record<string, string>): string {
  return Object.entries(fields).map(([k, val]) => `<input type="hidden" name="${escape(k)}" value="${escape(val)}">`).join('');
}
