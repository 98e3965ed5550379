/** Memory stores: tenant data agents reach through the toolkit's memory tools, people through the API, dashboard and CLI. */
export { memoryFeature } from './memory.feature.ts';
export { assertStoresExist, createStore, deleteStoreBy, getStoreView, listStoreViews, resolveLimits, searchMemory, updateStoreBy, type StoreView } from './stores.service.ts';
export { deleteEntryAt, locate, getVersionOf, listEntriesOf, listVersionsOf, readEntry, renameEntry, restoreVersion, sha256, writeEntry, type Caller, type MemoryDeps, type VersionView } from './entries.service.ts';
export { readNote, writeNote, NOTE_MAX_BYTES } from './automation-note.ts';
export { purgeOldVersions } from './purge.ts';
export { actorOf as memoryActorOf, runIdOf } from './access.ts';
