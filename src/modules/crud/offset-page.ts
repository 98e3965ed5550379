import type { Context } from 'hono';
import { readPaging } from '../../shared/http.ts';

/**
 * The list convention of /api: without `limit` the full list, with `limit` (and `offset`) one page and the full count
 * in X-Total-Count. One helper so every list route pages the same way.
 */
export interface Page {
  limit: number | undefined;
  offset: number;
}

export function pageOf(c: Context): Page {
  return readPaging(c, 1000);
}

export function sendList<T>(c: Context, page: Page, result: { items: T[]; total: number }): Response {
  if (page.limit !== undefined) c.header('X-Total-Count', String(result.total));
  return c.json(result.items);
}
