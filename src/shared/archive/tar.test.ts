import { describe, expect, it } from 'vitest';
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
    expect(unpackTar(tar).map((f) => [f.path, f.kind])).toEqual([['dir/', 'directory'], ['a/b/name.txt', 'file']]);
  });

  it('reports links, devices and FIFOs by kind, for the caller to refuse', () => {
    const tar = Buffer.concat([rawHeader('link', 0, '2'), rawHeader('hard', 0, '1'), rawHeader('tty', 0, '3'), rawHeader('fifo', 0, '6'), end]);
    expect(unpackTar(tar).map((e) => [e.path, e.kind])).toEqual([['link', 'symlink'], ['hard', 'hardlink'], ['tty', 'device'], ['fifo', 'fifo']]);
  });

  it.each([
    ['an unknown entry type', Buffer.concat([rawHeader('odd', 0, 'Z'), end]), /unknown type/],
    ['a bad checksum', Buffer.concat([rawHeader('x', 0, '0', { badChecksum: true }), end]), /checksum/],
    ['a truncated entry', Buffer.concat([rawHeader('x', 4096, '0'), new Uint8Array(512)]), /truncated/],
    ['no end-of-archive marker', rawHeader('x', 0, '0'), /truncated/],
    ['random bytes', new Uint8Array(2048).fill(7), /checksum|malformed/],
  ])('refuses %s', (_label, tar, pattern) => {
    expect(() => unpackTar(tar)).toThrow(TarError);
    expect(() => unpackTar(tar)).toThrow(pattern);
  });
});
