import * as v from 'valibot';

/**
 * The query of an offset-paged list (crud/offset-page.ts), as the API reference shows it: `limit` and `offset` are
 * integers in the query string; a list with a default limit always answers X-Total-Count, the others when `limit` is given.
 */
const Int = (what: string) => v.pipe(v.string(), v.regex(/^\d+$/, `${what}: an integer`), v.description(what));

export const PageQuery = v.object({
  limit: v.optional(Int('How many items at most')),
  offset: v.optional(Int('How many items to skip')),
});

/** `PageQuery` with more query parameters. */
export const pageQueryWith = <T extends v.ObjectEntries>(entries: T) => v.object({ ...PageQuery.entries, ...entries });

/** A query parameter in words (valibot's description becomes the JSON Schema's). */
export const queryParam = (description: string) => v.optional(v.pipe(v.string(), v.description(description)));
