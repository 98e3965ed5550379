import { gzipSync } from 'node:zlib';
import { packTar, readTarGz, type ArchiveLimits, type TarFile } from '../../../../shared/archive/index.ts';
import { badRequest } from '../../../../shared/errors.ts';

/**
 * State bundles of the SDK runtimes (runtime_a, runtime_b): a gzip-compressed tar of a few files, paths relative to
 * the runtime's state folder. They are svc's own data, never a tenant's upload: the worker packs them after a run,
 * the conductor keeps and returns them over internal routes. They still unpack through the archive module, so one
 * set of rules holds everywhere and a large bundle inflates off the event loop of a worker that serves other
 * sessions meanwhile: real bytes counted, clean relative names, regular files only. The runtime-specific checks then
 * only decide which files belong to a session. Every problem is a 4xx starting `state:`.
 */
export const BUNDLE_CONTENT_TYPE = 'application/gzip';

/** Unpacked size cap: a bundle is a transcript or a rollout, and a gzip bomb must not exhaust the worker's memory. */
export const MAX_UNPACKED_BYTES = 256 * 1024 * 1024;

/** No ratio limit: a transcript's text is the model's and its tools', and one that repeats itself compresses very well. */
const BUNDLE_LIMITS: ArchiveLimits = { totalBytes: MAX_UNPACKED_BYTES, entries: 10_000, entryBytes: MAX_UNPACKED_BYTES, ratio: Infinity, depth: 64 };

export function packBundle(files: readonly TarFile[]): Uint8Array {
  return gzipSync(packTar(files));
}

/** The regular files of a bundle (folders are implied by file paths). */
export async function unpackBundle(body: Uint8Array, maxBytes = MAX_UNPACKED_BYTES): Promise<TarFile[]> {
  const files = await readTarGz(body, { field: 'state', limits: { ...BUNDLE_LIMITS, totalBytes: maxBytes, entryBytes: maxBytes } });
  if (files.length === 0) throw badRequest('state: bundle holds no files');
  return files.map((f) => ({ path: f.path, data: f.content }));
}
