import * as v from 'valibot';

/**
 * Response schemas shared by the `/v1` resources (../shared/specs/agents-api-v1.md §2, §4): what the API reference
 * says a `/v1` answer holds (route-doc.ts `response`). The list page, the deleted answer, the cursor query, and the
 * small objects several resources carry. Timestamps are integer Unix seconds.
 */
export const Timestamp = v.pipe(v.number(), v.integer(), v.description('Unix seconds'));
export const StringMap = v.record(v.string(), v.string());

/** A cursor page (`{object: 'list', data, first_id, last_id, has_more}`): the next page is `after=<last_id>`. */
export function cursorPageOf<T extends v.GenericSchema>(item: T) {
  return v.object({
    object: v.literal('list'),
    data: v.array(item),
    first_id: v.nullable(v.string()),
    last_id: v.nullable(v.string()),
    has_more: v.boolean(),
  });
}

/** The answer to a delete: `{id, deleted: true, object: '<resource>.deleted'}`. */
export function deletedOf<O extends string>(object: O) {
  return v.object({ id: v.string(), deleted: v.literal(true), object: v.literal(object) });
}

/** The query of every cursor list (crud/cursor-page.ts `readCursor`), for the reference; `extra` adds a list's filters. */
export function cursorQuery<E extends v.ObjectEntries>(extra: E = {} as E, defaultOrder: 'asc' | 'desc' = 'desc') {
  return v.object({
    after: v.optional(v.pipe(v.string(), v.description('The id of the last item of the previous page (exclusive)'))),
    limit: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(100), v.description('Items per page, 1 to 100 (default 20)'))),
    order: v.optional(v.pipe(v.picklist(['asc', 'desc']), v.description(`Sort direction (default ${defaultOrder})`))),
    ...extra,
  });
}
export const CursorQuery = cursorQuery();

export const TokenUsage = v.object({
  input_tokens: v.number(),
  input_tokens_details: v.object({ cached_tokens: v.number() }),
  output_tokens: v.number(),
  output_tokens_details: v.object({ reasoning_tokens: v.number() }),
  total_tokens: v.number(),
});

export const OutputText = v.object({ type: v.literal('output_text'), text: v.string() });
export const SummaryText = v.object({ type: v.literal('summary_text'), text: v.string() });

/**
 * Error statuses every `/v1` route (and every extension route under `/api`, which shares its limits) may answer beyond
 * those the reference adds by itself: 429 (the per-key and per-organisation rate limit); writes also 403 (role viewer
 * may only read).
 */
export const READ_ERRORS = [429] as const;
export const WRITE_ERRORS = [403, 429] as const;

/** A compile-time check that a service's TypeScript type is what its response schema describes: `Describes<typeof S, T>`. */
export type Describes<S extends v.GenericSchema, T extends v.InferOutput<S>> = T;
