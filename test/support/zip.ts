import { crc32, deflateRawSync } from 'node:zlib';

/**
 * Zips written byte by byte, for the cases no zip tool writes on purpose: entries that lie about their size (in both
 * the local header and the central directory), names with `..`, drive letters or backslashes, symbolic links and
 * devices (a Unix mode in the external attributes).
 */
export interface CraftedEntry {
  name: string;
  /** The real content; deflated unless `method` is 0. */
  data?: Uint8Array;
  /** Already-deflated bytes to store as they are (reused across entries to build big bombs fast). */
  deflated?: Uint8Array;
  /** CRC-32 of `data`, when the caller has it already (4096 entries of 1 MiB need not be summed 4096 times). */
  crc?: number;
  /** The size the headers claim; the real one when absent. */
  declaredSize?: number;
  /** Unix `st_mode` (type and permission bits), e.g. 0o120777 for a symbolic link. */
  mode?: number;
  method?: 0 | 8;
}

const UTF8_NAMES = 0x0800;

export function craftZip(entries: readonly CraftedEntry[]): Uint8Array {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = Buffer.from(e.name, 'utf8');
    const method = e.method ?? 8;
    const data = e.data ?? new Uint8Array(0);
    const body = e.deflated ?? (method === 8 ? deflateRawSync(data) : data);
    const declared = e.declaredSize ?? data.byteLength;
    const crc = e.crc ?? crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(UTF8_NAMES, 6);
    local.writeUInt16LE(method, 8);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(body.byteLength, 18);
    local.writeUInt32LE(declared, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4); // made on Unix: the external attributes' high half is st_mode
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(UTF8_NAMES, 8);
    central.writeUInt16LE(method, 10);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(body.byteLength, 20);
    central.writeUInt32LE(declared, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(((e.mode ?? 0o100644) << 16) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, Buffer.from(body));
    centrals.push(central, name);
    offset += local.length + name.length + body.byteLength;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return new Uint8Array(Buffer.concat([...locals, directory, end]));
}

/**
 * Bytes that deflate about 50:1 (a repeating pattern broken every 200 bytes): under the ratio limit, so a bomb made
 * of them is stopped by the total, after real work.
 */
export function compressibleBytes(n: number): Uint8Array {
  const out = new Uint8Array(n);
  let seed = 7;
  for (let i = 0; i < n; i++) out[i] = i % 200 === 0 ? (seed = (seed * 1103515245 + 12345) >>> 0) >>> 24 : (i * 31) % 97;
  return out;
}

/**
 * A zip bomb whose every entry declares `declaredSize` bytes (100 by default) and holds `entryBytes` real bytes of
 * `compressibleBytes`; the entries share one deflated body, so a bomb of 70 MiB real builds in milliseconds.
 */
export function lyingZip(opts: { entries: number; entryBytes: number; declaredSize?: number; data?: Uint8Array; prefix?: string }): Uint8Array {
  const data = opts.data ?? compressibleBytes(opts.entryBytes);
  const deflated = deflateRawSync(data);
  const crc = crc32(data);
  const entries: CraftedEntry[] = [];
  for (let i = 0; i < opts.entries; i++) entries.push({ name: `${opts.prefix ?? ''}part-${i}.bin`, data, deflated, crc, declaredSize: opts.declaredSize ?? 100 });
  return craftZip(entries);
}
