import { AppError } from '../errors.ts';

/**
 * What an archive may unpack to. Every figure counts real bytes as they come out of the inflater, never the sizes an
 * archive declares (declared sizes only let an honest oversize archive be refused before anything is inflated).
 */
export interface ArchiveLimits {
  /** Inflated bytes of all entries together. */
  totalBytes: number;
  /** Entries (files, folders and everything else) in the archive. */
  entries: number;
  /** Inflated bytes of one entry. */
  entryBytes: number;
  /**
   * Inflated bytes per compressed byte, over the entries read so far; checked once RATIO_FLOOR_BYTES are inflated, so
   * a small, very compressible file passes. `Infinity` turns it off.
   */
  ratio: number;
  /** Folder levels of an entry's name (`a/b/c.txt` is 3). */
  depth: number;
}

const MiB = 1024 * 1024;

/** The limits of an archive a tenant uploads (skills, environment plugins and skills); SECURITY.md lists them. */
export const UPLOAD_ARCHIVE_LIMITS: Readonly<ArchiveLimits> = Object.freeze({ totalBytes: 64 * MiB, entries: 1000, entryBytes: 16 * MiB, ratio: 100, depth: 16 });

/** Below this many inflated bytes the ratio is not judged: a 40 KiB text file that compresses 200:1 is ordinary. */
export const RATIO_FLOOR_BYTES = MiB;

/**
 * Bytes one thread-pool task inflates (zlib's default is 16 KiB). The work runs on the pool, not the event loop, so a
 * bigger step costs the event loop nothing; it cuts the hand-offs between the pool and the loop, which is what a
 * refusal waits on when the machine is busy. A limit may be passed by at most one step before it is seen.
 */
export const INFLATE_STEP = 256 * 1024;

/** The longest entry name, in characters. */
export const MAX_NAME_CHARS = 1024;

export type LimitName = keyof ArchiveLimits;

/** A limit as a refusal states it: `64 MiB (67108864 bytes)`, `100:1`, `1000`. */
export function describeLimit(name: LimitName, limits: ArchiveLimits): string {
  const value = limits[name];
  if (name === 'ratio') return `${value}:1`;
  if (name === 'entries' || name === 'depth') return String(value);
  return value % MiB === 0 ? `${value / MiB} MiB (${value} bytes)` : `${value} bytes`;
}

/**
 * A refusal naming the limit it tripped (the message says which and its value; the code is `archive_<limit>`): 413 for
 * sizes, counts and the ratio, 400 for depth (a property of a name). `field` is the request field the archive came in
 * (`files`, `state`, `skills.0.source.data`).
 */
export function limitRefusal(field: string, limit: LimitName, message: string): AppError {
  return new AppError(limit === 'depth' ? 400 : 413, `${field}: ${message}`, { code: `archive_${limit.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}` });
}

/** A 400 for an entry the archive may not hold (its name or its kind) or an archive that cannot be read. */
export function entryRefusal(field: string, code: 'archive_entry_name' | 'archive_entry_type' | 'archive_invalid', message: string): AppError {
  return new AppError(400, `${field}: ${message}`, { code });
}
