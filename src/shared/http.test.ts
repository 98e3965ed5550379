import { describe, expect, it } from 'vitest';
import * as v from 'valibot';
import { jsonNestsDeeperThan, parseJsonBody, parseWith } from './http.ts';

describe('the JSON body reader', () => {
  it('counts nesting of objects and arrays, the body itself being level 1', () => {
    expect(jsonNestsDeeperThan('{"a":[{"b":[]}]}', 4)).toBe(false);
    expect(jsonNestsDeeperThan('{"a":[{"b":[]}]}', 3)).toBe(true);
    expect(jsonNestsDeeperThan('"just a string"', 0)).toBe(false);
  });

  it('does not count brackets inside strings, escaped quotes included', () => {
    expect(jsonNestsDeeperThan('{"a":"[[[{{{","b":"\\"[[[","c\\\\":"]]]"}', 1)).toBe(false);
  });

  it('refuses over-deep JSON with a 400 naming the limit before parsing it, and malformed JSON as malformed', () => {
    const deep = '['.repeat(5000) + ']'.repeat(5000);
    expect(() => parseJsonBody(deep)).toThrow('body: JSON nested deeper than 64 levels');
    expect(() => parseJsonBody('['.repeat(64) + ']'.repeat(64))).not.toThrow();
    expect(() => parseJsonBody('{"a":')).toThrow('body: malformed JSON');
  });

  it('keeps a NUL and a lone surrogate in a string as they were sent (the storage encoding holds them)', () => {
    expect(parseJsonBody('{"a":"x\\u0000y\\ud800"}')).toEqual({ a: 'x\u0000y\ud800' });
  });
});

describe('validation messages', () => {
  const schema = v.object({
    model: v.pipe(v.string(), v.check((s) => s.includes(':'), 'expected <provider>:<model_id>')),
    apiKey: v.optional(v.pipe(v.string(), v.check((s) => s.startsWith('sk-'), 'expected a key starting with sk-'))),
  });

  it('names the value a failed check got, so the caller sees what was wrong', () => {
    expect(() => parseWith(schema, { model: 'nope' })).toThrow('model: expected <provider>:<model_id>; received "nope"');
  });

  it('never repeats the value of a credential field back', () => {
    let message = '';
    try {
      parseWith(schema, { model: 'a:b', apiKey: 'hunter2-secret-value' });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toBe('apiKey: expected a key starting with sk-');
    expect(message).not.toContain('hunter2');
  });
});
