import { withTenant } from '../../../db/index.ts';
import { limitsOf, type Target } from './access.ts';
import { getEntry } from './entries.repo.ts';
import { writeIn, type MemoryDeps } from './entries.service.ts';
import { automationStore, getStore, insertStore } from './stores.repo.ts';
import { prefixedId } from '../../../shared/ids.ts';
import { RESERVED_STORE_PREFIX } from '../../../contracts/memory.ts';

/**
 * An automation's memory note (seed 000: `GET/PUT /api/automations/{id}/memory`, the `automation_memory` tool) is the
 * one entry of a store of its own, `automation-<id>`, made with its first write: so the note has versions, shows in
 * the dashboard and `svc memory`, and restores like any entry. These read and write that entry.
 */
export const NOTE_PATH = '/note.md';
export const NOTE_MAX_BYTES = 8192;

export async function readNote(deps: MemoryDeps, tenantId: string, automationId: string): Promise<{ body: string; updatedAt?: string }> {
  return withTenant(deps.db, tenantId, async (tx) => {
    const store = await automationStore(tx, automationId);
    const entry = store && (await getEntry(tx, { storeId: store.id, partition: '' }, NOTE_PATH));
    return entry ? { body: entry.content, updatedAt: entry.updatedAt } : { body: '' };
  });
}

export async function writeNote(deps: MemoryDeps, tenantId: string, a: { id: string; name: string }, body: string, actor: string): Promise<{ body: string; updatedAt: string }> {
  return withTenant(deps.db, tenantId, async (tx) => {
    const name = `${RESERVED_STORE_PREFIX}${a.id}`;
    const store =
      (await automationStore(tx, a.id)) ??
      (await insertStore(tx, {
        id: prefixedId('mst'),
        tenantId,
        name,
        description: `The memory note of automation ${a.name}, given to each of its firings.`,
        scope: 'shared',
        maxEntries: 1,
        maxEntryBytes: NOTE_MAX_BYTES,
        maxTotalBytes: NOTE_MAX_BYTES,
        metadata: {},
        automationId: a.id,
      })) ??
      (await getStore(tx, { name }))!;
    const target: Target = { tenantId, store, partition: '', access: 'read_write', actor, limits: limitsOf(deps.config, store) };
    const { entry } = await writeIn(tx, target, NOTE_PATH, body);
    return { body: entry.content, updatedAt: entry.updatedAt };
  });
}
