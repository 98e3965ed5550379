import type { EntryKind } from './entry-name.ts';

/**
 * A minimal POSIX tar (ustar + pax) reader and writer, in memory, for the worker's state bundles (a transcript or a
 * rollout, tens of KB to a few MB; the reader gets an already size-checked buffer from `readTarGz`). The reader
 * verifies checksums and bounds sizes by the buffer, and reports each entry's kind for the caller to judge; a malformed
 * archive is a `TarError`, which callers turn into a 400.
 */
export interface TarFile {
  path: string;
  data: Uint8Array;
}

export interface TarEntry extends TarFile {
  kind: EntryKind;
}

const KIND_OF_TYPE: Record<string, EntryKind> = { '0': 'file', '7': 'file', '5': 'directory', '1': 'hardlink', '2': 'symlink', '3': 'device', '4': 'device', '6': 'fifo' };

export class TarError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TarError';
  }
}

const BLOCK = 512;
const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

function writeString(header: Uint8Array, offset: number, length: number, value: string): void {
  header.set(encoder.encode(value).subarray(0, length), offset);
}

function writeOctal(header: Uint8Array, offset: number, length: number, value: number): void {
  writeString(header, offset, length, value.toString(8).padStart(length - 1, '0') + '\0');
}

function headerBlock(name: string, size: number, type: string, mtime: number): Uint8Array {
  const header = new Uint8Array(BLOCK);
  writeString(header, 0, 100, name);
  writeOctal(header, 100, 8, 0o644);
  writeOctal(header, 108, 8, 0);
  writeOctal(header, 116, 8, 0);
  writeOctal(header, 124, 12, size);
  writeOctal(header, 136, 12, mtime);
  header.fill(0x20, 148, 156); // the checksum field counts as spaces while summing
  writeString(header, 156, 1, type);
  writeString(header, 257, 6, 'ustar\0');
  writeString(header, 263, 2, '00');
  let sum = 0;
  for (const byte of header) sum += byte;
  writeString(header, 148, 8, sum.toString(8).padStart(6, '0') + '\0 ');
  return header;
}

/** One pax record, `<len> path=<value>\n`, where `<len>` counts the whole record including its own digits. */
function paxRecord(key: string, value: string): Uint8Array {
  const body = encoder.encode(` ${key}=${value}\n`).length;
  let length = body + String(body).length;
  while (body + String(length).length !== length) length = body + String(length).length;
  return encoder.encode(`${length} ${key}=${value}\n`);
}

const padding = (size: number) => new Uint8Array((BLOCK - (size % BLOCK)) % BLOCK);

/** Packs regular files; paths longer than the 100-byte name field get a pax `path` record. */
export function packTar(files: readonly TarFile[], mtime = Math.floor(Date.now() / 1000)): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const file of files) {
    if (encoder.encode(file.path).length > 100) {
      const pax = paxRecord('path', file.path);
      parts.push(headerBlock('PaxHeader', pax.length, 'x', mtime), pax, padding(pax.length));
    }
    parts.push(headerBlock(file.path, file.data.length, '0', mtime), file.data, padding(file.data.length));
  }
  parts.push(new Uint8Array(BLOCK * 2));
  return Buffer.concat(parts);
}

function readString(block: Uint8Array, offset: number, length: number): string {
  const field = block.subarray(offset, offset + length);
  const end = field.indexOf(0);
  try {
    return decoder.decode(end < 0 ? field : field.subarray(0, end));
  } catch {
    throw new TarError('entry name is not valid UTF-8');
  }
}

function readOctal(block: Uint8Array, offset: number, length: number, field: string): number {
  const text = readString(block, offset, length).trim();
  if (!/^[0-7]+$/.test(text)) throw new TarError(`malformed ${field} field`);
  return parseInt(text, 8);
}

function checksumOk(block: Uint8Array): boolean {
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : block[i];
  return sum === readOctal(block, 148, 8, 'checksum');
}

/** The `path` of a pax extended header: records `<len> <key>=<value>\n`, with `<len>` counted in bytes. */
function paxPath(data: Uint8Array): string | undefined {
  let path: string | undefined;
  for (let p = 0; p < data.length; ) {
    const space = data.indexOf(0x20, p);
    const length = space > p ? Number(Buffer.from(data.subarray(p, space)).toString('latin1')) : NaN;
    if (!Number.isInteger(length) || length <= space - p + 1 || p + length > data.length || data[p + length - 1] !== 0x0a) {
      throw new TarError('malformed pax header');
    }
    const record = readString(data.subarray(space + 1, p + length - 1), 0, length);
    const eq = record.indexOf('=');
    if (eq <= 0) throw new TarError('malformed pax header');
    if (record.slice(0, eq) === 'path') path = record.slice(eq + 1);
    p += length;
  }
  return path;
}

/** Every entry with its kind (directories come back with `path` ending in `/` and no data). */
export function unpackTar(buffer: Uint8Array): TarEntry[] {
  const files: TarEntry[] = [];
  let offset = 0;
  let longName: string | undefined;
  for (;;) {
    if (offset + BLOCK > buffer.length) throw new TarError('archive is truncated (no end-of-archive marker)');
    const block = buffer.subarray(offset, offset + BLOCK);
    if (block.every((b) => b === 0)) return files;
    if (!checksumOk(block)) throw new TarError('header checksum mismatch');
    const size = readOctal(block, 124, 12, 'size');
    const type = String.fromCharCode(block[156] || 0x30);
    const start = offset + BLOCK;
    if (start + size > buffer.length) throw new TarError('entry data is truncated');
    const data = buffer.subarray(start, start + size);
    offset = start + size + padding(size).length;

    if (type === 'x' || type === 'L') {
      longName = type === 'x' ? paxPath(data) : readString(data, 0, data.length);
      continue;
    }
    if (type === 'g') continue; // global pax defaults carry nothing a bundle needs
    // The 155-byte name prefix exists only in POSIX ustar headers; GNU headers use those bytes for other things.
    const prefix = readString(block, 257, 6) === 'ustar' ? readString(block, 345, 155) : '';
    const name = longName ?? (prefix ? `${prefix}/${readString(block, 0, 100)}` : readString(block, 0, 100));
    longName = undefined;
    const kind = KIND_OF_TYPE[type];
    if (!kind) throw new TarError(`entry ${JSON.stringify(name)} has an unknown type ${JSON.stringify(type)}`);
    if (kind === 'directory') files.push({ path: name.endsWith('/') ? name : `${name}/`, data: new Uint8Array(0), kind });
    else files.push({ path: name, data: kind === 'file' ? new Uint8Array(data) : new Uint8Array(0), kind });
  }
}
