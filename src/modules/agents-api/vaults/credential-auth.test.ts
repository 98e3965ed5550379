import { describe, expect, it } from 'vitest';
import { parse } from 'valibot';
import { AuthCreate, AuthRotate, rotateAuth, splitAuth } from './credential-auth.ts';

const oauth = parse(AuthCreate, {
  type: 'mcp_oauth',
  mcp_server_url: 'https://mcp.example.com',
  access_token: 'at-1',
  expires_at: '2030-01-01T00:00:00Z',
  refresh: { client_id: 'c', refresh_token: 'rt-1', token_endpoint: 'https://auth.example.com/token', token_endpoint_auth: { type: 'client_secret_basic', client_secret: 'cs-1' }, scope: 'a b' },
});

describe('credential auth', () => {
  it('splits secrets from the public part', () => {
    const { pub, secrets } = splitAuth(oauth);
    expect(secrets).toEqual({ access_token: 'at-1', refresh_token: 'rt-1', client_secret: 'cs-1' });
    expect(JSON.stringify(pub)).not.toMatch(/at-1|rt-1|cs-1/);
    expect(pub).toEqual({
      type: 'mcp_oauth',
      mcp_server_url: 'https://mcp.example.com',
      expires_at: '2030-01-01T00:00:00Z',
      refresh: { client_id: 'c', token_endpoint: 'https://auth.example.com/token', resource: null, scope: 'a b', token_endpoint_auth: { type: 'client_secret_basic' } },
    });
  });

  it('keeps what a rotation omits, clears expires_at with a new access token, and stops the scope on null', () => {
    const { pub, secrets } = splitAuth(oauth);
    const keep = rotateAuth(pub, secrets, parse(AuthRotate, { type: 'mcp_oauth' }));
    expect(keep).toEqual({ pub, secrets });
    const expiresOnly = rotateAuth(pub, secrets, parse(AuthRotate, { type: 'mcp_oauth', expires_at: null }));
    expect(expiresOnly.pub).toMatchObject({ expires_at: null });
    const fresh = rotateAuth(pub, secrets, parse(AuthRotate, { type: 'mcp_oauth', access_token: 'at-2', refresh: { scope: null, token_endpoint_auth: { type: 'client_secret_basic' } } }));
    expect(fresh.secrets).toEqual({ access_token: 'at-2', refresh_token: 'rt-1', client_secret: 'cs-1' });
    expect(fresh.pub).toMatchObject({ expires_at: null, refresh: { scope: null } });
    expect(pub.type === 'mcp_oauth' && pub.refresh?.scope).toBe('a b'); // the input was not mutated
    const dated = rotateAuth(pub, secrets, parse(AuthRotate, { type: 'mcp_oauth', access_token: 'at-3', expires_at: '2031-01-01T00:00:00Z' }));
    expect(dated.pub).toMatchObject({ expires_at: '2031-01-01T00:00:00Z' });
  });

  it('refuses to change the method, server, client or token-endpoint authentication', () => {
    const { pub, secrets } = splitAuth(oauth);
    expect(() => rotateAuth(pub, secrets, parse(AuthRotate, { type: 'static_bearer', token: 't' }))).toThrow(/^auth\.type: /);
    expect(() => rotateAuth(pub, secrets, parse(AuthRotate, { type: 'mcp_oauth', mcp_server_url: 'https://other.example.com' }))).toThrow(/^auth\.mcp_server_url: /);
    expect(() => rotateAuth(pub, secrets, parse(AuthRotate, { type: 'mcp_oauth', refresh: { client_id: 'd' } }))).toThrow(/^auth\.refresh\.client_id: /);
    expect(() => rotateAuth(pub, secrets, parse(AuthRotate, { type: 'mcp_oauth', refresh: { token_endpoint_auth: { type: 'client_secret_post', client_secret: 'x' } } }))).toThrow(/^auth\.refresh\.token_endpoint_auth\.type: /);
    const bare = splitAuth(parse(AuthCreate, { type: 'mcp_oauth', mcp_server_url: 'https://m.example.com', access_token: 'a' }));
    expect(() => rotateAuth(bare.pub, bare.secrets, parse(AuthRotate, { type: 'mcp_oauth', refresh: { refresh_token: 'r' } }))).toThrow(/^auth\.refresh: /);
  });
});
