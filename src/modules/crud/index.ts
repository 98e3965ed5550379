/**
 * CRUD helpers shared by the conductor's features and the agents API, so a new resource is a schema, a repo with its
 * SQL, a service and a routes file: run in the caller's tenant, find-or-404, offset pages (`/api`: full list or
 * `limit`/`offset` with X-Total-Count) and cursor pages (`/v1`: `after`/`limit`/`order`, list envelope), the deleted answer.
 */
export { inTenant, tenantOf, found, findOr404, type WithPrincipal } from './tenant-scope.ts';
export { pageOf, PageQuery, sendList, type Page, type BoundedPage } from './offset-page.ts';
export { readCursor, cursorPage, pageArray, type CursorQuery, type CursorPage } from './cursor-page.ts';
export { afterRow, keysetRows } from './keyset.repo.ts';
export { deletedObject, noContent } from './deleted.ts';
