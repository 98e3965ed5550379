import * as oauth from 'oauth4webapi';
import { withTenant } from '../../../db/index.ts';
import { AppError, describeError } from '../../../shared/errors.ts';
import { guardedFetch } from '../../../shared/egress/index.ts';
import type { ResourceDeps } from '../deps.ts';
import { openJson, sealJson } from '../secret-box.ts';
import type { AuthSecrets, PublicAuth } from './credential-auth.ts';
import { lockCredential, matchingCredentials, updateCredentialAuth } from './vaults.repo.ts';

/**
 * A vault credential applied as an MCP server's auth at run time (seed 001 "MCP servers on agents, vaults and
 * credentials"): the credential named by the tool's `credential_id`, or, without one, the single active credential of
 * the session's vaults whose `mcp_server_url` is the server's URL. A `static_bearer` gives its token; an `mcp_oauth`
 * its access token, refreshed first when it has expired (or expires within a minute) and the credential has a
 * refresh configuration. The refresh runs under the credential's row lock, so replicas starting turns at once
 * refresh it once; the new tokens are sealed back into the credential (a rotated refresh token replaces the old).
 *
 * The OAuth exchange is oauth4webapi's refresh-token grant (RFC 6749 §6, with the credential's client
 * authentication: none, client_secret_basic or client_secret_post, and RFC 8707 `resource`): a maintained,
 * dependency-free client that checks the token response, rather than a hand-written form POST.
 */
export interface McpAuthQuery {
  vaultIds: readonly string[];
  serverUrl: string;
  credentialId?: string | null;
  /** The tool's label, for error messages. */
  label: string;
}

const EXPIRY_SKEW_MS = 60_000;
const REFRESH_TIMEOUT_MS = 15_000;
const aad = (tenantId: string, id: string) => `vault_credentials:${tenantId}:${id}`;

const sameUrl = (a: string, b: string) => {
  try {
    return new URL(a).href === new URL(b).href;
  } catch {
    return a === b;
  }
};

/** An MCP server's auth that cannot be applied: the turn fails with this message (a 4xx-class problem of its setup). */
const authProblem = (message: string) => new AppError(400, message, { code: 'invalid_request_error' });

/** The bearer for the server, or undefined when no credential applies (no vaults, none matching the URL). */
export async function mcpBearer(deps: ResourceDeps, tenantId: string, q: McpAuthQuery, now = new Date()): Promise<string | undefined> {
  if (q.vaultIds.length === 0) {
    if (q.credentialId) throw authProblem(`MCP server ${q.label}: credential ${q.credentialId} is not in the session's vaults (the session has none)`);
    return undefined;
  }
  const rows = await withTenant(deps.db, tenantId, (tx) => matchingCredentials(tx, [...q.vaultIds], { credentialId: q.credentialId ?? undefined, serverUrl: q.serverUrl }));
  if (q.credentialId && rows.length === 0) throw authProblem(`MCP server ${q.label}: credential ${q.credentialId} is not an active credential of the session's vaults`);
  if (rows.length === 0) return undefined;
  if (rows.length > 1) throw authProblem(`MCP server ${q.label}: ${rows.length} credentials of the session's vaults match ${q.serverUrl}; name one with credential_id`);
  const row = rows[0];
  const pub = row.auth as unknown as PublicAuth;
  // a credential is sent only to the server it was made for
  if (!sameUrl(pub.mcp_server_url, q.serverUrl)) throw authProblem(`MCP server ${q.label}: credential ${row.id} is for ${pub.mcp_server_url}, not ${q.serverUrl}`);
  const secrets = openJson<AuthSecrets>(deps.box, row.sealed, aad(tenantId, row.id));
  if (pub.type === 'static_bearer') return secrets.token;
  if (!expired(pub, now)) return secrets.access_token;
  return refreshed(deps, tenantId, row.id, row.vault_id, q.label, now);
}

function expired(pub: Extract<PublicAuth, { type: 'mcp_oauth' }>, now: Date): boolean {
  return pub.expires_at !== null && new Date(pub.expires_at).getTime() - EXPIRY_SKEW_MS <= now.getTime();
}

async function refreshed(deps: ResourceDeps, tenantId: string, id: string, vaultId: string, label: string, now: Date): Promise<string> {
  return withTenant(deps.db, tenantId, async (tx) => {
    const row = await lockCredential(tx, vaultId, id);
    if (!row) throw authProblem(`MCP server ${label}: credential ${id} was deleted`);
    const pub = row.auth as unknown as Extract<PublicAuth, { type: 'mcp_oauth' }>;
    const secrets = openJson<AuthSecrets>(deps.box, row.sealed, aad(tenantId, id));
    // another replica (or turn) refreshed it while this one waited for the lock
    if (!expired(pub, now)) return secrets.access_token!;
    if (!pub.refresh || !secrets.refresh_token) {
      throw authProblem(`MCP server ${label}: the access token of credential ${id} expired at ${pub.expires_at} and it has no refresh configuration; rotate it`);
    }
    const r = pub.refresh;
    let tokens: oauth.TokenEndpointResponse;
    try {
      const as: oauth.AuthorizationServer = { issuer: new URL(r.token_endpoint).origin, token_endpoint: r.token_endpoint };
      const client: oauth.Client = { client_id: r.client_id };
      const clientAuth =
        r.token_endpoint_auth.type === 'client_secret_basic'
          ? oauth.ClientSecretBasic(secrets.client_secret!)
          : r.token_endpoint_auth.type === 'client_secret_post'
            ? oauth.ClientSecretPost(secrets.client_secret!)
            : oauth.None();
      const extra = new URLSearchParams();
      if (r.scope) extra.set('scope', r.scope);
      if (r.resource) extra.set('resource', r.resource);
      // the token endpoint is the tenant's URL: called under the address policy
      const tenantFetch = deps.tenantFetch ?? ((url, init) => guardedFetch(url, init, 'deny'));
      const response = await oauth.refreshTokenGrantRequest(as, client, clientAuth, secrets.refresh_token, {
        additionalParameters: extra,
        signal: AbortSignal.timeout(REFRESH_TIMEOUT_MS),
        [oauth.customFetch]: (url, init) => tenantFetch(url, init as RequestInit),
      });
      tokens = await oauth.processRefreshTokenResponse(as, client, response);
    } catch (err) {
      throw authProblem(`MCP server ${label}: refreshing the access token of credential ${id} failed: ${describeError(err)}`);
    }
    const next: AuthSecrets = { ...secrets, access_token: tokens.access_token, ...(tokens.refresh_token ? { refresh_token: tokens.refresh_token } : {}) };
    const expiresAt = typeof tokens.expires_in === 'number' ? new Date(now.getTime() + tokens.expires_in * 1000).toISOString() : null;
    await updateCredentialAuth(tx, id, { ...pub, expires_at: expiresAt }, sealJson(deps.box, next, aad(tenantId, id)));
    return tokens.access_token;
  });
}
