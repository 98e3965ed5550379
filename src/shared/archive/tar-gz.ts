import { createGunzip } from 'node:zlib';
import { isAppError } from '../errors.ts';
import { checkEntryName, kindProblem } from './entry-name.ts';
import { describeLimit, entryRefusal, INFLATE_STEP, limitRefusal, RATIO_FLOOR_BYTES, type ArchiveLimits } from './limits.ts';
import { publish } from './progress.ts';
import { TarError, unpackTar } from './tar.ts';
import type { ArchiveFile, ReadArchiveOptions } from './zip.ts';

/**
 * Reads a gzip-compressed tar held in memory into its regular files. The gzip stream is inflated by
 * `zlib.createGunzip()` on libuv's thread pool, INFLATE_STEP at a time, pulled by a `for await` that counts the real bytes
 * and destroys the inflater as soon as the total or the ratio limit trips; the tar inside is then parsed from the
 * (bounded) buffer and its entries judged like a zip's: names, kinds, count, bytes per entry.
 */
export async function readTarGz(bytes: Uint8Array, { field, limits }: ReadArchiveOptions & { limits: Readonly<ArchiveLimits> }): Promise<ArchiveFile[]> {
  let refused: string | null = null;
  let inflated = 0;
  let entries = 0;
  try {
    const tar = await gunzip(bytes, field, limits, (n) => (inflated = n));
    let parsed;
    try {
      parsed = unpackTar(tar);
    } catch (err) {
      if (err instanceof TarError) throw entryRefusal(field, 'archive_invalid', `not a valid tar archive (${err.message})`);
      throw err;
    }
    entries = parsed.length;
    if (parsed.length > limits.entries) throw limitRefusal(field, 'entries', `the archive holds ${parsed.length} entries, over the limit of ${describeLimit('entries', limits)}`);
    const files: ArchiveFile[] = [];
    const seen = new Set<string>();
    for (const entry of parsed) {
      const path = checkEntryName(field, entry.path, limits);
      const problem = kindProblem(entry.kind);
      if (problem) throw entryRefusal(field, 'archive_entry_type', `entry ${JSON.stringify(entry.path)} ${problem}`);
      if (seen.has(path)) throw entryRefusal(field, 'archive_entry_name', `entry ${JSON.stringify(path)} appears more than once`);
      seen.add(path);
      if (entry.kind !== 'file') continue;
      if (entry.data.byteLength > limits.entryBytes) {
        throw limitRefusal(field, 'entryBytes', `entry ${JSON.stringify(path)} holds more than ${describeLimit('entryBytes', limits)}, the limit per entry`);
      }
      files.push({ path, content: entry.data, executable: false });
    }
    return files;
  } catch (err) {
    refused = isAppError(err) ? (err.code ?? String(err.status)) : 'error';
    throw err;
  } finally {
    publish({ event: 'end', format: 'tar.gz', field, entries, inflatedBytes: inflated, refused });
  }
}

async function gunzip(bytes: Uint8Array, field: string, limits: Readonly<ArchiveLimits>, progress: (inflated: number) => void): Promise<Uint8Array> {
  const inflater = createGunzip({ chunkSize: INFLATE_STEP });
  inflater.end(bytes);
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of inflater as AsyncIterable<Buffer>) {
      total += chunk.length;
      progress(total);
      if (total > limits.totalBytes) throw limitRefusal(field, 'totalBytes', `the archive inflates past ${describeLimit('totalBytes', limits)}, the limit on total inflated bytes`);
      if (total > RATIO_FLOOR_BYTES && total > limits.ratio * bytes.byteLength) {
        throw limitRefusal(field, 'ratio', `the archive inflates more than ${describeLimit('ratio', limits)}, over the limit on compression ratio`);
      }
      chunks.push(chunk);
    }
  } catch (err) {
    if (isAppError(err)) throw err;
    throw entryRefusal(field, 'archive_invalid', `not a gzip stream (${(err as Error).message})`);
  } finally {
    inflater.destroy();
  }
  return new Uint8Array(Buffer.concat(chunks, total));
}
