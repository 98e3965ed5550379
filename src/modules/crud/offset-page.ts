import type { Context } from 'hono';
import * as v from 'valibot';
import { readPaging } from '../../shared/http.ts';

/**
 * The list convention of /api: without `limit` the full list, with `limit` (and `offset`) one page and the full count
 * in X-Total-Count. Lists that always page (seed 000 Limits: workflows, automations, pods answer 200 rows unless told
 * otherwise) give `defaultLimit`, and so always answer X-Total-Count. One helper so every list route pages the same way.
 */
export interface Page {
  limit: number | undefined;
  offset: number;
}

/** A page of a list that always pages. */
export interface BoundedPage extends Page {
  limit: number;
}

/** The list query the API reference documents for the routes that page with pageOf: `limit` and `offset`. */
export const PageQuery = v.object({
  limit: v.optional(v.pipe(v.string(), v.regex(/^\d+$/), v.description('At most this many items; the full count is then in X-Total-Count'))),
  offset: v.optional(v.pipe(v.string(), v.regex(/^\d+$/), v.description('Skip this many items first'))),
});

export function pageOf(c: Context): Page;
export function pageOf(c: Context, opts: { defaultLimit: number; max?: number }): BoundedPage;
export function pageOf(c: Context, opts?: { defaultLimit: number; max?: number }): Page {
  const page = readPaging(c, opts?.max ?? 1000);
  return { limit: page.limit ?? opts?.defaultLimit, offset: page.offset };
}

export function sendList<T>(c: Context, page: Page, result: { items: T[]; total: number }): Response {
  if (page.limit !== undefined) c.header('X-Total-Count', String(result.total));
  return c.json(result.items);
}
