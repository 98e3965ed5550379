import type { Context } from 'hono';
import { badRequest } from '../../shared/errors.ts';

/**
 * Cursor pages of the agents API (spec §4.1): `after` (exclusive id in the requested order), `limit` (1-100, default
 * 20), `order` (`desc` by default). One helper for every list so they page identically.
 */
export interface CursorQuery {
  after: string | undefined;
  limit: number;
  order: 'asc' | 'desc';
}

export function readCursor(c: Context, defaultOrder: 'asc' | 'desc' = 'desc'): CursorQuery {
  const after = c.req.query('after') || undefined; // empty = absent (null filters arrive as empty strings)
  const rawLimit = c.req.query('limit');
  const limit = rawLimit === undefined || rawLimit === '' ? 20 : Number(rawLimit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw badRequest('limit: expected an integer from 1 to 100');
  const order = c.req.query('order') || defaultOrder;
  if (order !== 'asc' && order !== 'desc') throw badRequest("order: expected 'asc' or 'desc'");
  return { after, limit, order };
}

export interface CursorPage<T extends { id: string }> {
  object: 'list';
  data: T[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

/** Builds the page from `limit + 1` rows fetched after the cursor: the extra row only tells whether more exist. */
export function cursorPage<T extends { id: string }>(rows: T[], limit: number): CursorPage<T> {
  const data = rows.slice(0, limit);
  return { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: rows.length > limit };
}

/** Pages an in-memory list already sorted in `order`. */
export function pageArray<T extends { id: string }>(sorted: T[], q: CursorQuery): CursorPage<T> {
  const start = q.after === undefined ? 0 : sorted.findIndex((x) => x.id === q.after) + 1;
  if (q.after !== undefined && start === 0) return cursorPage([], q.limit);
  return cursorPage(sorted.slice(start, start + q.limit + 1), q.limit);
}
