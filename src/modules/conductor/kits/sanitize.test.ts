import { describe, expect, it } from 'vitest';
import { canonical, credentialShaped, sanitizeProfile } from './sanitize.ts';

describe('kit sanitizing', () => {
  it.each([
    ['Authorization', 'Bearer abc', true],
    ['X-Api-Key', 'short', true],
    ['X-Team', 'blue', false],
    ['X-Custom', 'ghp_abcdefghijklmnop', true],
    ['X-Custom', 'c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0', true],
    ['Accept', 'application/json', false],
  ])('header %s: %s is credential-shaped: %s', (name, value, expected) => {
    expect(credentialShaped(name, value)).toBe(expected);
  });

  it('strips env values, credential headers, URL credentials and computed fields, naming each', () => {
    const stripped: string[] = [];
    const out = sanitizeProfile(
      {
        id: 'prof_1',
        name: 'p',
        workerPlacement: { substrate: 'process' },
        env: { DB_PASSWORD: 'hunter2', REGION: 'eu' },
        mcpServers: [{ name: 'm', url: 'https://u:pw@h.example/mcp?token=t0k3n&x=1', headers: { 'X-Trace': 'on', Cookie: 'sid=1' }, env: { K: 'v' } }],
      },
      stripped,
    );
    expect(out).toEqual({
      name: 'p',
      env: { DB_PASSWORD: '', REGION: '' },
      mcpServers: [{ name: 'm', url: 'https://h.example/mcp?token=&x=1', headers: { 'X-Trace': 'on', Cookie: '' }, env: { K: '' } }],
    });
    expect(stripped).toEqual(['profiles.p.env.DB_PASSWORD', 'profiles.p.env.REGION', 'profiles.p.mcpServers.m.url(userinfo)', 'profiles.p.mcpServers.m.url?token', 'profiles.p.mcpServers.m.headers.Cookie', 'profiles.p.mcpServers.m.env.K']);
  });

  it('compares snapshots regardless of key order', () => {
    expect(canonical({ b: 1, a: { d: [1, { f: 2, e: 3 }], c: 2 } })).toBe(canonical({ a: { c: 2, d: [1, { e: 3, f: 2 }] }, b: 1 }));
  });
});
