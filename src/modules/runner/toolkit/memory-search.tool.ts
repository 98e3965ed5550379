import { z } from 'zod';
import type { MemorySearchHit } from '../../../contracts/memory.ts';
import { defineTool } from './tool.ts';
import { call, display, memoryOf, ROOT } from './memory-view.ts';

function describeHits(query: string, hits: MemorySearchHit[]): string {
  if (hits.length === 0) return `No memory matches ${JSON.stringify(query)}.`;
  const lines = hits.map((h) => `${display(h.store, h.path)} (version ${h.version}, ${h.bytes} bytes, rank ${h.rank.toFixed(3)}): ${h.snippet.replace(/\s+/g, ' ').trim()}`);
  return `${hits.length} memory ${hits.length === 1 ? 'match' : 'matches'} for ${JSON.stringify(query)}, best first:\n${lines.join('\n')}`;
}

/**
 * `memory_search`: PostgreSQL full-text search over the memory stores the session mounts (or one of them), best match
 * first, each hit with the words that matched in context; only what the run may read (its own end user's memory).
 */
export const memorySearchTool = defineTool({
  name: 'memory_search',
  description:
    `Search your memory (${ROOT}) for files about something: words, "a phrase", "or", -word to exclude. Best matches first, each with ` +
    'its path and the matching words in context; view a file to read all of it.',
  input: z.object({
    query: z.string().min(1).max(1000),
    store: z.string().optional().describe('search only this store (the folder name under /memories)'),
    limit: z.number().int().min(1).max(50).default(10),
  }),
  scope: 'tenant',
  capability: 'memory.read',
  async run(i, ctx) {
    const m = memoryOf(ctx, 'memory_search');
    const hits = await call(() => m.client.search(m.token, { q: i.query, store: i.store, limit: i.limit }, m.signal));
    // text, not an object: Claude Code would show the model an object's JSON instead
    return describeHits(i.query, hits);
  },
});
