import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { packTar } from '../../../../shared/archive/index.ts';
import { packBundle, unpackBundle } from './bundle.ts';

const text = (s: string) => new TextEncoder().encode(s);

/** A raw ustar header for cases our writer never produces (links, bad checksums, prefixes). */
function rawHeader(name: string, size: number, type: string, opts: { prefix?: string; badChecksum?: boolean } = {}): Uint8Array {
  const h = new Uint8Array(512);
  h.set(text(name), 0);
  h.set(text('0000644\0'), 100);
  h.set(text(size.toString(8).padStart(11, '0') + '\0'), 124);
  h.set(text('00000000000\0'), 136);
  h.fill(0x20, 148, 156);
  h.set(text(type), 156);
  h.set(text('ustar\0' + '00'), 257);
  if (opts.prefix) h.set(text(opts.prefix), 345);
  const sum = h.reduce((a, b) => a + b, 0) + (opts.badChecksum ? 1 : 0);
  h.set(text(sum.toString(8).padStart(6, '0') + '\0 '), 148);
  return h;
}
const end = new Uint8Array(1024);

describe('state bundle checks', () => {
  it('round-trips a gzip tar of files', async () => {
    const files = await unpackBundle(packBundle([{ path: 'projects/p/s.jsonl', data: text('line\n') }]));
    expect(files).toEqual([{ path: 'projects/p/s.jsonl', data: text('line\n') }]);
  });

  it.each([
    ['bytes that are not gzip', text('not a bundle'), /^state: not a gzip stream/],
    ['gzip of something that is not tar', gzipSync(text('hello')), /^state: not a valid tar archive/],
    ['an entry escaping the folder', gzipSync(packTar([{ path: '../../etc/cron.d/x', data: text('x') }])), /climbs out of the archive/],
    ['an absolute entry', gzipSync(packTar([{ path: '/tmp/x', data: text('x') }])), /is an absolute path/],
    ['a backslash traversal', gzipSync(packTar([{ path: 'a\\..\\..\\x', data: text('x') }])), /climbs out of the archive/],
    ['a control character in a name', gzipSync(packTar([{ path: 'a\u0001b', data: text('x') }])), /control character/],
    ['a symbolic link', gzipSync(Buffer.concat([rawHeader('link', 0, '2'), end])), /is a symbolic link/],
    ['a device', gzipSync(Buffer.concat([rawHeader('dev', 0, '3'), end])), /is a device/],
    ['the same entry twice', gzipSync(packTar([{ path: 'a', data: text('1') }, { path: 'a', data: text('2') }])), /appears more than once/],
    ['an empty archive', gzipSync(packTar([])), /holds no files/],
  ])('refuses %s with a 400', async (_label, body, pattern) => {
    await expect(unpackBundle(body)).rejects.toMatchObject({ status: 400, message: expect.stringMatching(pattern) });
  });

  it('refuses a bundle that unpacks past the size cap with a 413 naming the limit, off the event loop', async () => {
    const big = packBundle([{ path: 'a', data: new Uint8Array(64 * 1024) }]);
    await expect(unpackBundle(big, 16 * 1024)).rejects.toMatchObject({ status: 413, code: 'archive_total_bytes', message: expect.stringMatching(/^state: the archive inflates past 16384 bytes/) });
  });
});
