import { promisify } from 'node:util';
import { crc32, deflateRaw } from 'node:zlib';
import type { ZipInputFile } from 'fflate';

/**
 * Writes files into a zip without holding the event loop: each file is deflated by `node:zlib` on libuv's thread pool
 * (native, and several times faster than deflating in JavaScript), one file at a time; fflate's streaming `Zip` only
 * writes the headers and the central directory around the deflated bytes. `zipSync` of a 64 MiB skill held the event
 * loop for seconds.
 */
const deflate = promisify(deflateRaw);

/** fflate is loaded with the first archive written, not with the server. */
let fflate: Promise<typeof import('fflate')> | undefined;
const loadFflate = () => (fflate ??= import('fflate'));

export async function writeZip(files: ReadonlyArray<{ path: string; content: Uint8Array }>, mtime: Date): Promise<Uint8Array> {
  const { Zip } = await loadFflate();
  const bodies: Array<Uint8Array<ArrayBuffer>> = [];
  for (const f of files) {
    const body = await deflate(f.content, { level: 6 });
    bodies.push(new Uint8Array(body.buffer as ArrayBuffer, body.byteOffset, body.byteLength));
  }
  return new Promise((resolve, reject) => {
    const out: Uint8Array[] = [];
    const zip = new Zip((err, chunk, final) => {
      if (err) return reject(err);
      out.push(chunk);
      if (final) resolve(new Uint8Array(Buffer.concat(out)));
    });
    files.forEach((f, i) => {
      const entry: ZipInputFile = { filename: f.path, size: f.content.byteLength, crc: crc32(f.content), compression: 8, mtime };
      zip.add(entry);
      entry.ondata!(null, bodies[i], true);
    });
    zip.end();
  });
}
