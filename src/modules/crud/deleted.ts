import type { Context } from 'hono';

/** The `/v1` answer to a delete (spec §4): `{id, deleted: true, object: '<resource>.deleted'}`. */
export function deletedObject<O extends string>(id: string, object: O): { id: string; deleted: true; object: O } {
  return { id, deleted: true, object };
}

/** The `/api` answer to a delete: 204, no body. */
export function noContent(c: Context): Response {
  return c.body(null, 204);
}
