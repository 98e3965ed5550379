import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { isCleanRelativePath, packBundle, unpackBundle } from './bundle.ts';
import { packTar, TarError, unpackTar } from './tar.ts';

const text = (s: string) => new TextEncoder().encode(s);
const decode = (b: Uint8Array) => new TextDecoder().decode(b);

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

describe('state bundle tar', () => {
  it('round-trips files, including empty ones and paths longer than the ustar name field', () => {
    const long = `projects/${'-deep'.repeat(40)}/0b9a3f0e-2d7c-4a7e-9a52-3c1d2e4f5a6b.jsonl`;
    const files = [
      { path: 'sessions/2026/11/21/rollout-x.jsonl', data: text('{"a":1}\n'.repeat(200)) },
      { path: long, data: text('ünïcode ✓') },
      { path: 'empty.txt', data: new Uint8Array(0) },
    ];
    const back = unpackTar(packTar(files));
    expect(back.map((f) => f.path)).toEqual(files.map((f) => f.path));
    expect(back.map((f) => decode(f.data))).toEqual(files.map((f) => decode(f.data)));
  });

  it('reads the ustar prefix field and directory entries', () => {
    const data = text('hi');
    const tar = Buffer.concat([rawHeader('dir', 0, '5'), rawHeader('name.txt', 2, '0', { prefix: 'a/b' }), data, new Uint8Array(510), end]);
    expect(unpackTar(tar).map((f) => f.path)).toEqual(['dir/', 'a/b/name.txt']);
  });

  it.each([
    ['a symlink', Buffer.concat([rawHeader('link', 0, '2'), end]), /not a regular file/],
    ['a hard link', Buffer.concat([rawHeader('hard', 0, '1'), end]), /not a regular file/],
    ['a bad checksum', Buffer.concat([rawHeader('x', 0, '0', { badChecksum: true }), end]), /checksum/],
    ['a truncated entry', Buffer.concat([rawHeader('x', 4096, '0'), new Uint8Array(512)]), /truncated/],
    ['no end-of-archive marker', rawHeader('x', 0, '0'), /truncated/],
    ['random bytes', new Uint8Array(2048).fill(7), /checksum|malformed/],
  ])('refuses %s', (_label, tar, pattern) => {
    expect(() => unpackTar(tar)).toThrow(TarError);
    expect(() => unpackTar(tar)).toThrow(pattern);
  });
});

describe('state bundle checks', () => {
  it('round-trips a gzip tar of files', () => {
    const files = unpackBundle(packBundle([{ path: 'projects/p/s.jsonl', data: text('line\n') }]));
    expect(files).toEqual([{ path: 'projects/p/s.jsonl', data: text('line\n') }]);
  });

  it.each(['a/b.txt', 'sessions/2026/x.jsonl'])('accepts the clean relative path %s', (p) => expect(isCleanRelativePath(p)).toBe(true));
  it.each(['', '/etc/passwd', '../x', 'a/../../x', 'a//b', './a', 'a/.', 'a\\b', 'a\0b'])('refuses the path %j', (p) => expect(isCleanRelativePath(p)).toBe(false));

  it.each([
    ['bytes that are not gzip', text('not a bundle'), /not a gzip stream/],
    ['gzip of something that is not tar', gzipSync(text('hello')), /not a valid tar archive/],
    ['an entry escaping the folder', gzipSync(packTar([{ path: '../../etc/cron.d/x', data: text('x') }])), /not a clean relative path/],
    ['an absolute entry', gzipSync(packTar([{ path: '/tmp/x', data: text('x') }])), /not a clean relative path/],
    ['the same entry twice', gzipSync(packTar([{ path: 'a', data: text('1') }, { path: 'a', data: text('2') }])), /appears twice/],
    ['an empty archive', gzipSync(packTar([])), /holds no files/],
  ])('refuses %s with a 400', (_label, body, pattern) => {
    let error: unknown;
    try {
      unpackBundle(body);
    } catch (err) {
      error = err;
    }
    expect(error).toMatchObject({ status: 400, message: expect.stringMatching(pattern) });
  });

  it('refuses a bundle that unpacks past the size cap', () => {
    const big = packBundle([{ path: 'a', data: new Uint8Array(64 * 1024) }]);
    expect(() => unpackBundle(big, 16 * 1024)).toThrow(/unpacks to more than 16384 bytes/);
  });
});
