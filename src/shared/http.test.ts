import { describe, expect, it } from 'vitest';
import { jsonNestsDeeperThan, parseJsonBody } from './http.ts';

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
    expect(() => parseJsonBody('{"a":"\\u0000"}')).toThrow(/NUL characters/);
  });
});
