/**
 * The one way svc unpacks an archive: zips that tenants upload (skills, environment plugins and skills) and the
 * worker's gzip-compressed tar state bundles. Real inflated bytes are counted against `ArchiveLimits` while a
 * streaming inflater runs on libuv's thread pool, and reading stops at the first limit that trips. Zips svc writes
 * (a skill's stored archive) are deflated on the thread pool too.
 */
export { readZip, type ArchiveFile, type ReadArchiveOptions } from './zip.ts';
export { readTarGz } from './tar-gz.ts';
export { writeZip } from './zip-write.ts';
export { packTar, type TarFile } from './tar.ts';
export { checkEntryName } from './entry-name.ts';
export { UPLOAD_ARCHIVE_LIMITS, RATIO_FLOOR_BYTES, describeLimit, type ArchiveLimits } from './limits.ts';
export { ARCHIVE_CHANNEL, type ArchiveProgress } from './progress.ts';
