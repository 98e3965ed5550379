import * as v from 'valibot';
import { badRequest } from '../../../shared/errors.ts';
import { HttpsUrl } from '../validation.ts';

/**
 * Credential `auth` objects (spec §2.10, §3.4): the create and rotate shapes, the public part kept in clear (what
 * responses show), and the write-only secrets (`access_token`, `refresh_token`, `client_secret`, `token`) that are
 * only ever stored sealed. Rotation replaces secrets but never the method, the MCP server URL or the OAuth client.
 */
const Secret = v.pipe(v.string(), v.minLength(1, 'a non-empty string'));
const Rfc3339 = v.pipe(v.string(), v.isoTimestamp('an RFC 3339 timestamp'));
const SECRET_AUTH_TYPES = ['client_secret_basic', 'client_secret_post'] as const;

const TokenEndpointAuthCreate = v.variant('type', [
  v.object({ type: v.literal('none') }),
  v.object({ type: v.picklist(SECRET_AUTH_TYPES), client_secret: Secret }),
]);

export const AuthCreate = v.variant('type', [
  v.object({
    type: v.literal('mcp_oauth'),
    mcp_server_url: HttpsUrl,
    access_token: Secret,
    expires_at: v.optional(v.nullable(Rfc3339)),
    refresh: v.optional(
      v.nullable(
        v.object({
          client_id: Secret,
          refresh_token: Secret,
          token_endpoint: HttpsUrl,
          token_endpoint_auth: TokenEndpointAuthCreate,
          resource: v.optional(v.nullable(v.string())),
          scope: v.optional(v.nullable(v.string())),
        }),
      ),
    ),
  }),
  v.object({ type: v.literal('static_bearer'), mcp_server_url: HttpsUrl, token: Secret }),
]);

export const AuthRotate = v.variant('type', [
  v.object({
    type: v.literal('mcp_oauth'),
    mcp_server_url: v.optional(v.string()),
    access_token: v.optional(v.nullable(Secret)),
    expires_at: v.optional(v.nullable(Rfc3339)),
    refresh: v.optional(
      v.nullable(
        v.object({
          client_id: v.optional(v.string()),
          token_endpoint: v.optional(v.string()),
          refresh_token: v.optional(v.nullable(Secret)),
          scope: v.optional(v.nullable(v.string())),
          token_endpoint_auth: v.optional(v.nullable(v.object({ type: v.picklist(SECRET_AUTH_TYPES), client_secret: v.optional(v.nullable(Secret)) }))),
        }),
      ),
    ),
  }),
  v.object({ type: v.literal('static_bearer'), mcp_server_url: v.optional(v.string()), token: Secret }),
]);

export type AuthCreateInput = v.InferOutput<typeof AuthCreate>;
export type AuthRotateInput = v.InferOutput<typeof AuthRotate>;

export type PublicAuth =
  | {
      type: 'mcp_oauth';
      mcp_server_url: string;
      expires_at: string | null;
      refresh: null | { client_id: string; token_endpoint: string; resource: string | null; scope: string | null; token_endpoint_auth: { type: 'none' | 'client_secret_basic' | 'client_secret_post' } };
    }
  | { type: 'static_bearer'; mcp_server_url: string };

export interface AuthSecrets {
  access_token?: string;
  refresh_token?: string;
  client_secret?: string;
  token?: string;
}

/** Splits a create `auth` into its public part and its secrets. */
export function splitAuth(auth: AuthCreateInput): { pub: PublicAuth; secrets: AuthSecrets } {
  if (auth.type === 'static_bearer') return { pub: { type: 'static_bearer', mcp_server_url: auth.mcp_server_url }, secrets: { token: auth.token } };
  const r = auth.refresh ?? null;
  const secrets: AuthSecrets = { access_token: auth.access_token };
  if (r) secrets.refresh_token = r.refresh_token;
  if (r && r.token_endpoint_auth.type !== 'none') secrets.client_secret = r.token_endpoint_auth.client_secret;
  return {
    pub: {
      type: 'mcp_oauth',
      mcp_server_url: auth.mcp_server_url,
      expires_at: auth.expires_at ?? null,
      refresh: r && { client_id: r.client_id, token_endpoint: r.token_endpoint, resource: r.resource ?? null, scope: r.scope ?? null, token_endpoint_auth: { type: r.token_endpoint_auth.type } },
    },
    secrets,
  };
}

/**
 * Applies a rotation. Omitted or null secrets keep the stored ones; a new `access_token` clears `expires_at` unless
 * one is given; `expires_at: null` clears it; `refresh.scope: null` stops sending a scope.
 */
export function rotateAuth(pub: PublicAuth, secrets: AuthSecrets, auth: AuthRotateInput): { pub: PublicAuth; secrets: AuthSecrets } {
  if (auth.type !== pub.type) throw badRequest(`auth.type: a credential's authentication method cannot change (it is ${pub.type})`);
  if (auth.mcp_server_url !== undefined && auth.mcp_server_url !== pub.mcp_server_url) throw badRequest("auth.mcp_server_url: a credential's MCP server URL cannot change");
  if (auth.type === 'static_bearer' || pub.type === 'static_bearer') return { pub, secrets: { token: (auth as { token: string }).token } };
  const next: PublicAuth = { ...pub, refresh: pub.refresh && { ...pub.refresh, token_endpoint_auth: { ...pub.refresh.token_endpoint_auth } } };
  const out: AuthSecrets = { ...secrets };
  if (auth.access_token) {
    out.access_token = auth.access_token;
    next.expires_at = auth.expires_at ?? null;
  } else if ('expires_at' in auth) next.expires_at = auth.expires_at ?? null;
  const r = auth.refresh;
  if (r) {
    if (!next.refresh) throw badRequest('auth.refresh: this credential has no refresh configuration to update');
    if (r.client_id !== undefined && r.client_id !== next.refresh.client_id) throw badRequest("auth.refresh.client_id: a credential's OAuth client cannot change");
    if (r.token_endpoint !== undefined && r.token_endpoint !== next.refresh.token_endpoint) throw badRequest("auth.refresh.token_endpoint: a credential's token endpoint cannot change");
    if (r.refresh_token) out.refresh_token = r.refresh_token;
    if ('scope' in r) next.refresh.scope = r.scope ?? null;
    if (r.token_endpoint_auth) {
      if (r.token_endpoint_auth.type !== next.refresh.token_endpoint_auth.type) {
        throw badRequest(`auth.refresh.token_endpoint_auth.type: the token endpoint authentication method cannot change (it is ${next.refresh.token_endpoint_auth.type})`);
      }
      if (r.token_endpoint_auth.client_secret) out.client_secret = r.token_endpoint_auth.client_secret;
    }
  }
  return { pub: next, secrets: out };
}
