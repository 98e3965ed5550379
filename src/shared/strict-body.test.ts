import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { parseWith } from './http.ts';
import { readOnly } from './strict-body.ts';
import { closest } from './suggest.ts';

const Body = v.object({
  id: readOnly(),
  name: v.string(),
  systemPrompt: v.optional(v.string()),
  members: v.optional(v.array(v.object({ profile: v.string(), role: v.optional(v.string()) }))),
  metadata: v.optional(v.record(v.string(), v.unknown())),
  extra: v.optional(v.looseObject({ a: v.optional(v.number()) })),
  auth: v.optional(v.variant('type', [v.object({ type: v.literal('bearer'), token: v.string() }), v.object({ type: v.literal('basic'), user: v.string() })])),
});

const refusal = (body: unknown) => {
  try {
    parseWith(Body, body, { strict: true });
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
};

describe('a strict body', () => {
  it('names each unknown field with the nearest known one', () => {
    expect(refusal({ name: 'a', instructions: 'x' })).toBe('instructions: unknown field (did you mean systemPrompt?)');
    expect(refusal({ name: 'a', system_prompt: 'x', colour: 1 })).toBe('system_prompt: unknown field (did you mean systemPrompt?); colour: unknown field');
    expect(refusal({ name: 'a', members: [{ profile: 'p', rloe: 'lead' }] })).toBe('members.0.rloe: unknown field (did you mean role?)');
    expect(refusal({ name: 'a', auth: { type: 'basic', user: 'u', tokn: 'x' } })).toBe('auth.tokn: unknown field');
  });

  it('leaves free-form values and loose objects open, and drops read-only fields', () => {
    expect(refusal({ name: 'a', metadata: { anything: { goes: 1 } }, extra: { b: 2 } })).toBeUndefined();
    expect(parseWith(Body, { id: 'x', name: 'a' }, { strict: true })).toEqual({ name: 'a' });
  });

  it('drops unknown fields without a word when not strict (the lenient surfaces)', () => {
    expect(parseWith(Body, { name: 'a', instructions: 'x' })).toEqual({ name: 'a' });
  });
});

describe('closest', () => {
  it('finds a synonym, another casing, or a typo, and nothing for a stranger', () => {
    expect(closest('instructions', ['name', 'systemPrompt'])).toBe('systemPrompt');
    expect(closest('SYSTEM-PROMPT', ['systemPrompt'])).toBe('systemPrompt');
    expect(closest('lsit', ['list', 'get'])).toBe('list');
    expect(closest('zebra', ['list', 'get'])).toBeUndefined();
  });
});
