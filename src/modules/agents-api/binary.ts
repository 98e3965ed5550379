import type { Context } from 'hono';

/** A byte-for-byte download (file, skill and artifact content): explicit length, attachment filename. */
export function binary(c: Context, bytes: Uint8Array, contentType: string, filename: string): Response {
  return c.body(bytes as Uint8Array<ArrayBuffer>, 200, {
    'Content-Type': contentType,
    'Content-Length': String(bytes.byteLength),
    'Content-Disposition': `attachment; filename*=UTF-8''${encodeURIComponent(filename)}`,
  });
}
