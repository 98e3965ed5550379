import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../config/config.ts';
import { assertJwtComplete, toView } from './published.service.ts';
import { kebab } from './publishing.schema.ts';

describe('publishing', () => {
  it('defaults the slug to the kebab-case of the profile name', () => {
    expect(kebab('Support_Bot')).toBe('support-bot');
    expect(kebab('myAgent.v2')).toBe('my-agent-v2');
    expect(kebab('---')).toBe('agent');
    expect(kebab('a'.repeat(100))).toHaveLength(63);
  });

  it('shows publicUrl only when SVC_CHAT_PUBLIC_URL is set', () => {
    const row = {
      id: 'pub_1', tenant_id: 't', profile_name: 'p', slug: 'p', visibility: 'private', auth_mode: 'api_key', allowed_origins: [], rate_limit_rpm: 60,
      sync_max_duration_seconds: 60, conversation_ttl_days: null, expose_tool_events: false, approvals: 'deny', enabled: true, monthly_cost_cap_usd_cents: '250', jwks_url: null, jwt_issuer: null,
    } as const;
    expect(toView({ ...row, allowed_origins: [] }, undefined)).not.toHaveProperty('publicUrl');
    expect(toView({ ...row, allowed_origins: [] }, 'https://chat.example').publicUrl).toBe('https://chat.example/chat/p');
    expect(toView({ ...row, allowed_origins: [] }, undefined).monthlyCostCapUsdCents).toBe(250);
    expect(loadConfig({}).chatPublicUrl).toBeUndefined();
    expect(loadConfig({ SVC_CHAT_PUBLIC_URL: 'https://chat.example/' }).chatPublicUrl).toBe('https://chat.example');
    expect(() => loadConfig({ SVC_CHAT_PUBLIC_URL: 'ftp://x' })).toThrow(/SVC_CHAT_PUBLIC_URL/);
  });

  it('needs jwksUrl and jwtIssuer for authMode jwt, and an https JWKS outside dev', () => {
    expect(() => assertJwtComplete({ auth_mode: 'jwt', jwks_url: 'https://idp/jwks' }, 'dev')).toThrow('authMode: jwt needs jwksUrl and jwtIssuer');
    expect(() => assertJwtComplete({ auth_mode: 'jwt', jwks_url: 'http://10.0.0.1/jwks', jwt_issuer: 'i' }, 'live')).toThrow('jwksUrl: must be an https URL');
    expect(() => assertJwtComplete({ auth_mode: 'jwt', jwks_url: 'http://127.0.0.1/jwks', jwt_issuer: 'i' }, 'dev')).not.toThrow();
    expect(() => assertJwtComplete({ auth_mode: 'jwt', jwks_url: 'https://idp/jwks', jwt_issuer: 'i' }, 'live')).not.toThrow();
  });
});
