import { Hono, type Context } from 'hono';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../shared/errors.ts';
import { useJsonErrors } from '../../shared/http.ts';
import { cursorPage, deletedObject, findOr404, found, noContent, pageArray, pageOf, readCursor, sendList } from './index.ts';

/** Runs one handler in a tiny app and returns what the client sees. */
async function answer(handler: (c: Context) => unknown, query = '') {
  const app = new Hono();
  useJsonErrors(app);
  app.get('/x', async (c) => (await handler(c)) as Response);
  const res = await app.request(`/x${query}`);
  const text = await res.text();
  return { status: res.status, total: res.headers.get('X-Total-Count'), body: text ? JSON.parse(text) : null };
}

describe('find-or-404', () => {
  it('passes a found value through and answers 404 with the message otherwise', async () => {
    expect(found({ id: 'a' }, 'unknown thing: a')).toEqual({ id: 'a' });
    expect(found(true, 'unknown thing: a')).toBe(true);
    expect(await answer(() => found(undefined, 'unknown thing: a'))).toMatchObject({ status: 404, body: { error: 'unknown thing: a' } });
    expect(await answer(async () => findOr404(Promise.resolve(false), 'unknown thing: b'))).toMatchObject({ status: 404, body: { error: 'unknown thing: b' } });
  });

  it('throws the surface-specific error when given one', async () => {
    const res = await answer(async () => findOr404(Promise.resolve(null), () => new AppError(404, "No agent found with id 'x'.")));
    expect(res).toMatchObject({ status: 404, body: { error: "No agent found with id 'x'." } });
  });
});

describe('offset pages (/api)', () => {
  const list = (c: Context) => sendList(c, pageOf(c), { items: ['a', 'b'], total: 7 });

  it('answers the whole list without limit, and a page with X-Total-Count with one', async () => {
    expect(await answer(list)).toEqual({ status: 200, total: null, body: ['a', 'b'] });
    expect(await answer(list, '?limit=2&offset=2')).toEqual({ status: 200, total: '7', body: ['a', 'b'] });
  });

  it('answers a list that always pages 200 rows by default, with X-Total-Count, and refuses a limit over its cap', async () => {
    const seen: unknown[] = [];
    const bounded = (c: Context) => {
      const page = pageOf(c, { defaultLimit: 200, max: 200 });
      seen.push(page);
      return sendList(c, page, { items: ['a', 'b'], total: 7 });
    };
    expect(await answer(bounded)).toEqual({ status: 200, total: '7', body: ['a', 'b'] });
    expect(await answer(bounded, '?limit=5&offset=3')).toEqual({ status: 200, total: '7', body: ['a', 'b'] });
    expect(seen).toEqual([{ limit: 200, offset: 0 }, { limit: 5, offset: 3 }]);
    const over = await answer(bounded, '?limit=201');
    expect(over.status).toBe(400);
    expect(over.body.error).toBe('limit: expected an integer from 1 to 200');
  });

  it('refuses a bad limit with a 400 naming it', async () => {
    const res = await answer(list, '?limit=-1');
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/^limit/);
  });
});

describe('cursor pages (/v1)', () => {
  const rows = ['a', 'b', 'c', 'd'].map((id) => ({ id }));

  it('builds the list envelope from limit + 1 rows', () => {
    expect(cursorPage(rows.slice(0, 3), 2)).toEqual({ object: 'list', data: [{ id: 'a' }, { id: 'b' }], first_id: 'a', last_id: 'b', has_more: true });
    expect(cursorPage([], 2)).toEqual({ object: 'list', data: [], first_id: null, last_id: null, has_more: false });
  });

  it('reads after, limit and order, and pages an in-memory list after a cursor', async () => {
    const res = await answer((c) => c.json(pageArray(rows, readCursor(c))), '?after=b&limit=1');
    expect(res.body).toEqual({ object: 'list', data: [{ id: 'c' }], first_id: 'c', last_id: 'c', has_more: true });
    expect((await answer((c) => c.json(readCursor(c)), '?order=sideways')).status).toBe(400);
  });
});

describe('the deleted answer', () => {
  it('is {id, deleted, object} on /v1 and 204 without a body on /api', async () => {
    expect(deletedObject('vault_1', 'vault.deleted')).toEqual({ id: 'vault_1', deleted: true, object: 'vault.deleted' });
    expect(await answer((c) => noContent(c))).toEqual({ status: 204, total: null, body: null });
  });
});
