import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anyText as anyTextOf } from '../../test/support/any-text.ts';
import { backends } from '../../test/support/backends.ts';
import { decodeText, decodeValue, encodeText, storableJson } from './storable.ts';
import { jsonb, openDatabase, type Database } from './index.ts';

/**
 * The storage encoding (storable.ts): any JavaScript string, NUL and lone surrogates included, goes into PostgreSQL
 * and comes back exactly, through every way the app sends text there: Kysely parameters into `text` and `jsonb`
 * columns (keys too), JSON text from jsonb(), the job queue's SQL text, and notifications.
 */
const anyText = anyTextOf();
const lone = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

describe('the storage encoding', () => {
  it('gives back every string it encoded, and what it stores holds no NUL and no lone surrogate', () => {
    fc.assert(
      fc.property(anyText, (s) => {
        const stored = encodeText(s);
        expect(decodeText(stored)).toBe(s);
        expect(stored.includes('\0') || lone.test(stored)).toBe(false);
      }),
      { numRuns: 2000 },
    );
  });

  it('leaves a string without NUL, lone surrogates or U+FFFF as it is, emoji included', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => {
        fc.pre(!/[\0\uffff]/.test(s));
        expect(encodeText(s)).toBe(s);
        expect(decodeText(s)).toBe(s);
      }),
    );
  });

  it("writes jsonb() text that the statement encoding leaves alone, holding the same strings encodeText would store", () => {
    fc.assert(
      fc.property(fc.dictionary(anyText, fc.oneof(anyText, fc.array(anyText, { maxLength: 3 }))), (value) => {
        const text = storableJson(value);
        expect(encodeText(text)).toBe(text); // not encoded twice on its way out
        expect(decodeValue(JSON.parse(text))).toEqual(value);
      }),
      { numRuns: 500 },
    );
  });
});

describe.each(backends)('text and jsonb through PostgreSQL on $name', (backend) => {
  let database: Database;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    const db = await backend.setup();
    cleanup = db.cleanup;
    database = await openDatabase({ url: db.url, dataDir: '/nonexistent' });
    await database.executeText('CREATE TABLE t (id serial PRIMARY KEY, s text, j jsonb)');
  }, 60_000);
  afterAll(async () => {
    await database?.close();
    await cleanup?.();
  });

  it('stores any string in a text column and a jsonb value (as key, value and array item), and reads back the same', async () => {
    await fc.assert(
      fc.asyncProperty(anyText, async (s) => {
        const value = { [s]: [s, { s }] };
        const { id } = await sql<{ id: number }>`insert into t (s, j) values (${s}, ${jsonb(value)}) returning id`.execute(database.db).then((r) => r.rows[0]);
        const row = (await sql<{ s: string; j: unknown; item: string; same: boolean }>`
          select s, j, j->${s}->>0 as item, s = ${s} as same from t where id = ${id}`.execute(database.db)).rows[0];
        expect(row).toEqual({ s, j: value, item: s, same: true });
      }),
      { numRuns: 150 },
    );
  });

  it("stores what a command's bytes decode to (U+FFFD for what is not UTF-8) and reads back the same text", async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 300 }), async (bytes) => {
        const text = new TextDecoder().decode(bytes); // as the runner decodes a command's output
        const { rows } = await sql<{ s: string; j: { out: string } }>`insert into t (s, j) values (${text}, ${jsonb({ out: text })}) returning s, j`.execute(database.db);
        expect(rows[0]).toEqual({ s: text, j: { out: text } });
      }),
      { numRuns: 100 },
    );
  });

  it("round-trips any string through the job queue's SQL text", async () => {
    await fc.assert(
      fc.asyncProperty(anyText, async (s) => {
        const rows = (await database.executeText('insert into t (s) values ($1) returning s', [s])) as Array<{ s: string }>;
        expect(rows).toEqual([{ s }]);
      }),
      { numRuns: 100 },
    );
  });

  it('carries any string as a notification payload', async () => {
    const heard: string[] = [];
    let wake = () => {};
    const stop = await database.listen('storable_test', (p) => {
      heard.push(p);
      wake();
    });
    try {
      await fc.assert(
        fc.asyncProperty(anyText, async (s) => {
          const arrived = new Promise<void>((resolve) => (wake = resolve));
          await database.notify('storable_test', s);
          await arrived;
          expect(heard.pop()).toBe(s);
        }),
        { numRuns: 50 },
      );
    } finally {
      await stop();
    }
  });
});
