import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { withTenant } from '../../src/db/index.ts';
import { createSecretBox } from '../../src/modules/agents-api/secret-box.ts';
import { mcpBearer } from '../../src/modules/agents-api/vaults/mcp-auth.ts';
import { rawV1, SECRETS_KEY, startSdkSvc, type SdkSvc } from '../support/agents-sdk.ts';
import { backends, startOn } from '../support/backends.ts';

const SECRETS = ['oauth-access-SECRET-1', 'oauth-refresh-SECRET-2', 'client-SECRET-3', 'bearer-SECRET-4', 'rotated-SECRET-5', 'rotated-SECRET-6', 'rotated-SECRET-7'];

function oauth(server = 'https://mcp.example.com/mcp') {
  return {
    type: 'mcp_oauth' as const,
    mcp_server_url: server,
    access_token: SECRETS[0],
    expires_at: '2030-01-01T00:00:00Z',
    refresh: { client_id: 'client-1', refresh_token: SECRETS[1], token_endpoint: 'https://auth.example.com/token', token_endpoint_auth: { type: 'client_secret_post' as const, client_secret: SECRETS[2] }, scope: 'read write' },
  };
}

describe.each(backends)('vaults and credentials through the openai SDK on $name', (backend) => {
  let t: SdkSvc;
  const rawBodies: string[] = [];
  beforeAll(async () => {
    t = await startOn(backend, (url) => startSdkSvc({ DATABASE_URL: url }));
  });
  afterAll(() => t?.stop());

  it('creates a vault from {} and with a trimmed name and metadata (§8 item 16)', async () => {
    const empty = await t.client.beta.agents.vaults.create();
    expect(empty).toEqual({ id: expect.stringMatching(/^vault_/), created_at: expect.any(Number), metadata: {}, name: null, object: 'vault' });
    const named = await t.client.beta.agents.vaults.create({ name: '  team vault ', metadata: { team: 'core' } });
    expect(named).toMatchObject({ name: 'team vault', metadata: { team: 'core' } });
    expect(await t.client.beta.agents.vaults.retrieve(named.id)).toEqual(named);
    const err = await t.client.beta.agents.vaults.create({ name: '   ' }).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.param).toBe('name');
    const tooMany = await t.client.beta.agents.vaults.create({ metadata: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'])) }).catch((e) => e);
    expect(tooMany.param).toBe('metadata');
  });

  it('stores credentials and never returns their secrets (§8 item 18)', async () => {
    const vault = await t.client.beta.agents.vaults.create({ name: 'secrets' });
    const cred = await t.client.beta.agents.vaults.credentials.create(vault.id, { name: ' github ', auth: oauth() });
    expect(cred).toEqual({
      id: expect.stringMatching(/^cred_/),
      auth: {
        type: 'mcp_oauth',
        mcp_server_url: 'https://mcp.example.com/mcp',
        expires_at: '2030-01-01T00:00:00Z',
        refresh: { client_id: 'client-1', token_endpoint: 'https://auth.example.com/token', resource: null, scope: 'read write', token_endpoint_auth: { type: 'client_secret_post' } },
      },
      created_at: expect.any(Number),
      name: 'github',
      object: 'vault.credential',
      updated_at: expect.any(Number),
      vault_id: vault.id,
    });
    const bearer = await t.client.beta.agents.vaults.credentials.create(vault.id, { name: 'linear', auth: { type: 'static_bearer', mcp_server_url: 'https://mcp.linear.app/mcp', token: SECRETS[3] } });
    expect(bearer.auth).toEqual({ type: 'static_bearer', mcp_server_url: 'https://mcp.linear.app/mcp' });
    rawBodies.push((await rawV1(t.svc, `/vaults/${vault.id}/credentials/${cred.id}`)).text, (await rawV1(t.svc, `/vaults/${vault.id}/credentials`)).text);

    // Rotation keeps method and server, replaces secrets, clears expires_at with a new access token.
    const rotated = await t.client.beta.agents.vaults.credentials.update(cred.id, {
      vault_id: vault.id,
      auth: { type: 'mcp_oauth', access_token: SECRETS[4], refresh: { refresh_token: SECRETS[5], scope: null, token_endpoint_auth: { type: 'client_secret_post', client_secret: SECRETS[6] } } },
    });
    expect(rotated.auth).toMatchObject({ type: 'mcp_oauth', expires_at: null, refresh: { scope: null, client_id: 'client-1' } });
    expect(rotated.updated_at).toBeGreaterThanOrEqual(cred.updated_at);
    rawBodies.push((await rawV1(t.svc, `/vaults/${vault.id}/credentials/${cred.id}`, { method: 'POST', json: { auth: { type: 'static_bearer', token: SECRETS[3] } } })).text);
    for (const body of rawBodies) for (const secret of SECRETS) expect(body).not.toContain(secret);

    // The run-time resolver sees the rotated secret; the database holds only ciphertext.
    const db = t.svc.server.built.database!.db;
    const deps = { db, box: createSecretBox(SECRETS_KEY) };
    expect(await mcpBearer(deps, 'default', { vaultIds: [vault.id], serverUrl: 'https://mcp.example.com/mcp', label: 'docs' })).toBe(SECRETS[4]);
    expect(await mcpBearer(deps, 'default', { vaultIds: [vault.id], serverUrl: 'https://nowhere.example.com', label: 'docs' })).toBeUndefined();
    const stored = await withTenant(db, 'default', (tx) => tx.selectFrom('vault_credentials').selectAll().execute());
    expect(stored.length).toBeGreaterThan(0);
    expect(JSON.stringify(stored)).not.toMatch(/SECRET/);
  });

  it('refuses rotations that change the method or the server URL (400)', async () => {
    const vault = await t.client.beta.agents.vaults.create();
    const cred = await t.client.beta.agents.vaults.credentials.create(vault.id, { name: 'x', auth: { type: 'static_bearer', mcp_server_url: 'https://a.example.com', token: 't' } });
    const method = await t.client.beta.agents.vaults.credentials.update(cred.id, { vault_id: vault.id, auth: { type: 'mcp_oauth', access_token: 'z' } }).catch((e) => e);
    expect(method).toBeInstanceOf(OpenAI.BadRequestError);
    expect(method.param).toBe('auth.type');
    const url = await rawV1(t.svc, `/vaults/${vault.id}/credentials/${cred.id}`, { method: 'POST', json: { auth: { type: 'static_bearer', token: 'n', mcp_server_url: 'https://b.example.com' } } });
    expect(url.status).toBe(400);
    expect(url.json.error.param).toBe('auth.mcp_server_url');
    const http = await t.client.beta.agents.vaults.credentials.create(vault.id, { name: 'y', auth: { type: 'static_bearer', mcp_server_url: 'http://plain.example.com', token: 't' } }).catch((e) => e);
    expect(http.param).toBe('auth.mcp_server_url');
  });

  it('lists vaults and credentials across pages, with status filters as scalar or status[] (§8 items 13, 22)', async () => {
    const vaults: string[] = [];
    for (let i = 0; i < 5; i++) vaults.push((await t.other.beta.agents.vaults.create({ name: `v${i}` })).id);
    const seen: string[] = [];
    for await (const v of t.other.beta.agents.vaults.list({ limit: 2 })) seen.push(v.id);
    expect(seen).toEqual([...vaults].reverse());
    const both: string[] = [];
    for await (const v of t.other.beta.agents.vaults.list({ limit: 2, status: ['active', 'archived'], order: 'asc' })) both.push(v.id);
    expect(both).toEqual(vaults);
    expect((await t.other.beta.agents.vaults.list({ status: 'archived' })).data).toEqual([]);
    expect((await rawV1(t.svc, '/vaults?status%5B%5D=active&status%5B%5D=bogus', { key: t.keys.other })).json.error.param).toBe('status');

    const creds: string[] = [];
    for (let i = 0; i < 5; i++) creds.push((await t.other.beta.agents.vaults.credentials.create(vaults[0], { name: `c${i}`, auth: { type: 'static_bearer', mcp_server_url: 'https://m.example.com', token: `tok${i}` } })).id);
    const listed: string[] = [];
    for await (const c of t.other.beta.agents.vaults.credentials.list(vaults[0], { limit: 2, status: 'active' })) listed.push(c.id);
    expect(listed).toEqual([...creds].reverse());
  });

  it('deletes a vault with its credentials, and credentials one by one', async () => {
    const vault = await t.client.beta.agents.vaults.create();
    const a = await t.client.beta.agents.vaults.credentials.create(vault.id, { name: 'a', auth: { type: 'static_bearer', mcp_server_url: 'https://a.example.com', token: 't' } });
    const b = await t.client.beta.agents.vaults.credentials.create(vault.id, { name: 'b', auth: { type: 'static_bearer', mcp_server_url: 'https://b.example.com', token: 't' } });
    expect(await t.client.beta.agents.vaults.credentials.delete(a.id, { vault_id: vault.id })).toEqual({ id: a.id, deleted: true, object: 'vault.credential.deleted' });
    await expect(t.client.beta.agents.vaults.credentials.retrieve(a.id, { vault_id: vault.id })).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    expect(await t.client.beta.agents.vaults.delete(vault.id)).toEqual({ id: vault.id, deleted: true, object: 'vault.deleted' });
    await expect(t.client.beta.agents.vaults.retrieve(vault.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(t.client.beta.agents.vaults.credentials.retrieve(b.id, { vault_id: vault.id })).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });

  it("hides another organisation's vaults and credentials (404) and refuses viewer writes (403)", async () => {
    const vault = await t.client.beta.agents.vaults.create();
    const cred = await t.client.beta.agents.vaults.credentials.create(vault.id, { name: 'a', auth: { type: 'static_bearer', mcp_server_url: 'https://a.example.com', token: 't' } });
    await expect(t.other.beta.agents.vaults.retrieve(vault.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(t.other.beta.agents.vaults.credentials.retrieve(cred.id, { vault_id: vault.id })).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(t.other.beta.agents.vaults.delete(vault.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(t.other.beta.agents.vaults.credentials.create(vault.id, { name: 'x', auth: { type: 'static_bearer', mcp_server_url: 'https://a.example.com', token: 't' } })).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(t.viewer.beta.agents.vaults.create()).rejects.toBeInstanceOf(OpenAI.PermissionDeniedError);
    await expect(t.viewer.beta.agents.vaults.delete(vault.id)).rejects.toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect((await t.viewer.beta.agents.vaults.credentials.retrieve(cred.id, { vault_id: vault.id })).id).toBe(cred.id);
  });
});
