import type { Readable } from 'node:stream';
import { createInflateRaw } from 'node:zlib';
import type { Entry, ZipFile } from 'yauzl';
import { isAppError } from '../errors.ts';
import { checkEntryName, kindOfMode, kindProblem } from './entry-name.ts';
import { describeLimit, entryRefusal, INFLATE_STEP, limitRefusal, RATIO_FLOOR_BYTES, UPLOAD_ARCHIVE_LIMITS, type ArchiveLimits } from './limits.ts';
import { publish } from './progress.ts';

/**
 * Reads a zip held in memory into its regular files, inflating each entry as a stream and counting the bytes that
 * really come out: an entry that declares 100 bytes and inflates to 4 GiB is stopped when the first limit trips, with
 * the inflater destroyed there. yauzl reads the central directory and hands us each entry's raw bytes; a
 * `zlib.createInflateRaw()` inflates them on libuv's thread pool in INFLATE_STEP steps, so the event loop keeps
 * answering other requests between steps; the `for await` pulls one step at a time (backpressure), so at most the
 * limits' worth of bytes is ever held.
 */
export interface ArchiveFile {
  /** Normalised relative path (`dir/file.txt`). */
  path: string;
  content: Uint8Array;
  /** The Unix execute bit, where the archive records one. */
  executable: boolean;
}

export interface ReadArchiveOptions {
  /** The request field the archive came in; every refusal starts with it (`files: …`). */
  field: string;
  limits?: Readonly<ArchiveLimits>;
}

/** yauzl is loaded with the first archive, not with the server. */
let yauzl: Promise<typeof import('yauzl')> | undefined;
const loadYauzl = () => (yauzl ??= import('yauzl').then((m) => ((m as { default?: typeof import('yauzl') }).default ?? m)));

/** The running totals a limit is checked against. */
interface Totals {
  inflated: number;
  compressed: number;
}

export async function readZip(bytes: Uint8Array, { field, limits = UPLOAD_ARCHIVE_LIMITS }: ReadArchiveOptions): Promise<ArchiveFile[]> {
  const { fromBufferPromise, getFileNameLowLevel } = await loadYauzl();
  const totals: Totals = { inflated: 0, compressed: 0 };
  let index = 0;
  let refused: string | null = null;
  let zip: ZipFile;
  try {
    // decodeStrings off: names are decoded and judged below, so each refusal can say which rule an entry broke
    zip = await fromBufferPromise(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), { decodeStrings: false, validateEntrySizes: false, autoClose: false });
  } catch (err) {
    throw entryRefusal(field, 'archive_invalid', `not a readable zip archive (${(err as Error).message})`);
  }
  // every read below listens for errors itself; this keeps a late one (after a refusal) from crashing the process
  zip.on('error', () => {});
  try {
    if (zip.entryCount > limits.entries) {
      throw limitRefusal(field, 'entries', `the archive lists ${zip.entryCount} entries, over the limit of ${describeLimit('entries', limits)}`);
    }
    const files: ArchiveFile[] = [];
    const seen = new Set<string>();
    let declared = 0;
    for (;;) {
      const entry = await nextEntry(zip, field);
      if (!entry) break;
      index++;
      const raw = getFileNameLowLevel(entry.generalPurposeBitFlag, entry.fileNameRaw, entry.extraFields, true);
      const path = checkEntryName(field, raw, limits);
      const mode = entry.externalFileAttributes >>> 16;
      const kind = kindOfMode(mode, /[\\/]$/.test(raw));
      const problem = kindProblem(kind);
      if (problem) throw entryRefusal(field, 'archive_entry_type', `entry ${JSON.stringify(raw)} ${problem}`);
      if (seen.has(path)) throw entryRefusal(field, 'archive_entry_name', `entry ${JSON.stringify(path)} appears more than once`);
      seen.add(path);
      if (kind === 'directory') continue;
      if (entry.isEncrypted()) throw entryRefusal(field, 'archive_invalid', `entry ${JSON.stringify(path)} is encrypted`);
      if (entry.compressionMethod !== 0 && entry.compressionMethod !== 8) {
        throw entryRefusal(field, 'archive_invalid', `entry ${JSON.stringify(path)} uses compression method ${entry.compressionMethod} (only stored and deflated entries are read)`);
      }
      // Declared sizes are trusted only to refuse early: an honest archive over a limit costs no inflation.
      if (entry.uncompressedSize > limits.entryBytes) throw overEntry(field, path, limits, 'declares');
      declared += entry.uncompressedSize;
      if (declared > limits.totalBytes) throw overTotal(field, limits, 'declares');
      publish({ event: 'entry', format: 'zip', field, index, name: path, inflatedBytes: totals.inflated });
      totals.compressed += entry.compressedSize;
      const content = await inflate(zip, entry, path, field, limits, totals);
      files.push({ path, content, executable: kind === 'file' && (mode & 0o111) !== 0 });
    }
    return files;
  } catch (err) {
    refused = isAppError(err) ? (err.code ?? String(err.status)) : 'error';
    throw err;
  } finally {
    zip.close();
    publish({ event: 'end', format: 'zip', field, entries: index, inflatedBytes: totals.inflated, refused });
  }
}

async function nextEntry(zip: ZipFile, field: string): Promise<Entry | undefined> {
  return new Promise((resolve, reject) => {
    const cleanup = () => {
      zip.off('entry', onEntry);
      zip.off('end', onEnd);
      zip.off('error', onError);
    };
    const onEntry = (entry: Entry) => (cleanup(), resolve(entry));
    const onEnd = () => (cleanup(), resolve(undefined));
    const onError = (err: Error) => (cleanup(), reject(entryRefusal(field, 'archive_invalid', `not a readable zip archive (${err.message})`)));
    zip.on('entry', onEntry);
    zip.on('end', onEnd);
    zip.on('error', onError);
    zip.readEntry();
  });
}

async function inflate(zip: ZipFile, entry: Entry, path: string, field: string, limits: Readonly<ArchiveLimits>, totals: Totals): Promise<Uint8Array> {
  let raw: Readable;
  try {
    raw = await zip.openReadStreamPromise(entry, { decodeFileData: false });
  } catch (err) {
    throw entryRefusal(field, 'archive_invalid', `entry ${JSON.stringify(path)} cannot be read (${(err as Error).message})`);
  }
  let stream = raw;
  // some writers store an empty file as "deflated" with no bytes at all, which zlib calls truncated
  if (entry.compressionMethod === 8 && entry.compressedSize > 0) {
    const inflater = createInflateRaw({ chunkSize: INFLATE_STEP });
    raw.on('error', (err) => inflater.destroy(err));
    stream = raw.pipe(inflater);
  }
  const chunks: Buffer[] = [];
  let bytes = 0;
  try {
    // Leaving this loop by a throw destroys the inflater: nothing more is inflated.
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      totals.inflated += chunk.length;
      if (bytes > limits.entryBytes) throw overEntry(field, path, limits, 'inflates');
      if (totals.inflated > limits.totalBytes) throw overTotal(field, limits, 'inflates');
      if (totals.inflated > RATIO_FLOOR_BYTES && totals.inflated > limits.ratio * totals.compressed) {
        throw limitRefusal(field, 'ratio', `the archive inflates more than ${describeLimit('ratio', limits)} (${totals.inflated} bytes so far from ${totals.compressed} compressed), over the limit on compression ratio`);
      }
      chunks.push(chunk);
    }
  } catch (err) {
    if (isAppError(err)) throw err;
    throw entryRefusal(field, 'archive_invalid', `entry ${JSON.stringify(path)} is not valid compressed data (${(err as Error).message})`);
  } finally {
    stream.destroy();
    raw.destroy();
  }
  return new Uint8Array(Buffer.concat(chunks, bytes));
}

const overEntry = (field: string, path: string, limits: Readonly<ArchiveLimits>, verb: 'declares' | 'inflates') =>
  limitRefusal(field, 'entryBytes', `entry ${JSON.stringify(path)} ${verb === 'declares' ? 'declares more than' : 'inflates past'} ${describeLimit('entryBytes', limits)}, the limit per entry`);

const overTotal = (field: string, limits: Readonly<ArchiveLimits>, verb: 'declares' | 'inflates') =>
  limitRefusal(field, 'totalBytes', `the archive ${verb === 'declares' ? 'declares more than' : 'inflates past'} ${describeLimit('totalBytes', limits)}, the limit on total inflated bytes`);
