import { describe, expect, it } from 'vitest';
import { createSessionTokens, SESSION_TOKEN_TTL_MS } from './session-token.ts';

describe('session MCP tokens', () => {
  it('open their own session only, until they expire', () => {
    let now = 1_000_000;
    const tokens = createSessionTokens(() => now);
    const token = tokens.mint('sess-a');
    expect(tokens.verify('sess-a', token)).toBe(true);
    expect(tokens.verify('sess-b', token)).toBe(false);
    now += SESSION_TOKEN_TTL_MS;
    expect(tokens.verify('sess-a', token)).toBe(false);
  });

  it('refuse tampered, foreign and malformed tokens', () => {
    const tokens = createSessionTokens();
    const token = tokens.mint('sess-a');
    const [payload, mac] = token.split('.');
    const longer = Buffer.from(JSON.stringify({ s: 'sess-a', e: Date.now() + 10 * SESSION_TOKEN_TTL_MS })).toString('base64url');
    for (const bad of [undefined, '', 'x', `${payload}.`, `${longer}.${mac}`, `${payload}.${mac}.x`, createSessionTokens().mint('sess-a')]) {
      expect(tokens.verify('sess-a', bad)).toBe(false);
    }
  });
});
