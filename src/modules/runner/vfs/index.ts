/** The runner's VirtualFS: leases, mount layout and safe file operations for the toolkit. */
export { createVfsManager, type VfsManager, type VfsSession } from './vfs.manager.ts';
export type { VfsView } from './vfs.view.ts';
export { VfsError } from './paths.ts';
export { readFile, readText, writeText, editText, type FileRead } from './fs-ops.ts';
export { listDir, searchFiles } from './fs-walk.ts';
export { vfsRoutes } from './vfs.routes.ts';
