import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect, FAKE_MODEL, isTurnEnd, startAgentsHarness, textOf, type AgentsHarness } from '../support/agents.ts';
import { modelRequests } from '../support/fake-provider.ts';
import { startMcpServer, type TestMcpServer } from '../support/mcp-server.ts';
import { processesMentioning } from '../support/proc-table.ts';
import { listenTls, selfSignedCert, trustCert, type TestCert } from '../support/tls.ts';
import type { Listening } from '../support/listen.ts';
import { stdioMcpServer } from '../support/stdio-mcp.ts';

/**
 * MCP servers of agents with vault credentials (seed 001 "MCP servers on agents, vaults and credentials"), driven by
 * the `openai` 7.15.0 SDK: real MCP SDK servers over HTTPS that refuse a request without the right bearer, a fake
 * OAuth token endpoint, and the fake model provider whose logged requests show which tools the model was offered.
 */
describe('MCP servers with vault credentials and allowed_tools', () => {
  let h: AgentsHarness;
  let cert: TestCert;
  let untrust: () => void;
  let bearerServer: TestMcpServer;
  let oauthServer: TestMcpServer;
  let tokenEndpoint: Listening;
  const tokenRequests: Array<{ authorization: string | undefined; form: Record<string, string> }> = [];
  let currentAccessToken = 'fresh-access-token-1';

  beforeAll(async () => {
    cert = selfSignedCert();
    untrust = trustCert(cert);
    bearerServer = await startMcpServer({ name: 'docs', tls: cert, bearer: () => 'vault-bearer-token' });
    oauthServer = await startMcpServer({ name: 'tracker', tls: cert, bearer: () => currentAccessToken });
    // an OAuth token endpoint (RFC 6749 §6): the refresh-token grant with client_secret_basic
    const app = new Hono().post('/token', async (c) => {
      const form = Object.fromEntries(new URLSearchParams(await c.req.text())) as Record<string, string>;
      tokenRequests.push({ authorization: c.req.header('authorization'), form });
      // client_secret_basic: base64 of the form-urlencoded id and secret (RFC 6749 §2.3.1)
      const [id, secret] = Buffer.from((c.req.header('authorization') ?? '').replace(/^Basic /, ''), 'base64').toString().split(':').map((p) => decodeURIComponent(p.replace(/\+/g, ' ')));
      if (id !== 'client-1' || secret !== 'client-secret-1') return c.json({ error: 'invalid_client' }, 401);
      if (form.grant_type !== 'refresh_token' || form.refresh_token !== 'refresh-token-1') return c.json({ error: 'invalid_grant' }, 400);
      return c.json({ access_token: currentAccessToken, token_type: 'Bearer', expires_in: 3600, refresh_token: 'refresh-token-2' });
    });
    tokenEndpoint = await listenTls(app.fetch, cert);
    h = await startAgentsHarness();
  });
  afterAll(async () => {
    await h?.stop();
    await Promise.all([bearerServer?.close(), oauthServer?.close(), tokenEndpoint?.close()]);
    untrust?.();
  });

  const turn = async (sessionId: string, text: string) => {
    const events = await collect(await h.client.beta.agents.sessions.stream(sessionId, { input: text } as never), isTurnEnd);
    return events as unknown as Array<{ type: string; [k: string]: unknown }>;
  };

  it('calls an MCP server with the bearer of a static_bearer credential and its static headers, and offers only its allowed_tools', async () => {
    const vault = await h.client.beta.agents.vaults.create({ name: 'team' });
    const cred = await h.client.beta.agents.vaults.credentials.create(vault.id, {
      name: 'docs',
      auth: { type: 'static_bearer', mcp_server_url: bearerServer.url, token: 'vault-bearer-token' },
    });
    const agent = await h.client.beta.agents.create({
      model: FAKE_MODEL,
      tools: [{ type: 'mcp', server_label: 'docs', transport: { type: 'http', server_url: bearerServer.url, headers: { 'X-Team': 'blue' } }, allowed_tools: ['echo'], credential_id: cred.id }],
    });
    const session = await h.client.beta.agents.sessions.create({ agent_id: agent.id, environment: { type: 'none' }, vault_ids: [vault.id] });
    const before = modelRequests(h.fake).length;

    const events = await turn(session.id, 'CALL_TOOL docs__echo {"message":"hello"}');
    expect(events.at(-1)!.type).toBe('agent.session.turn.completed');
    expect(textOf(events as never)).toContain('TOOL-RESULT-SEEN: echo: hello');
    expect(bearerServer.calls).toEqual([{ name: 'echo', args: { message: 'hello' } }]);
    expect(new Set(bearerServer.authorizations)).toEqual(new Set(['Bearer vault-bearer-token']));
    // the agent's static headers travel with the credential's bearer
    expect(bearerServer.extraHeaders.length).toBeGreaterThan(0);
    expect(bearerServer.extraHeaders.every((h) => h['x-team'] === 'blue')).toBe(true);

    // the model was offered docs__echo and not docs__fail (not in allowed_tools)
    const offered = modelRequests(h.fake).slice(before).map((r) => JSON.stringify(r.body.tools ?? []));
    expect(offered.length).toBeGreaterThan(0);
    for (const tools of offered) {
      expect(tools).toContain('docs__echo');
      expect(tools).not.toContain('docs__fail');
    }
  });

  it('refreshes an expired OAuth access token once through the token endpoint and calls the server with the new one', async () => {
    const vault = await h.client.beta.agents.vaults.create({ name: 'oauth' });
    const cred = await h.client.beta.agents.vaults.credentials.create(vault.id, {
      name: 'tracker',
      auth: {
        type: 'mcp_oauth',
        mcp_server_url: oauthServer.url,
        access_token: 'expired-access-token',
        expires_at: new Date(Date.now() - 60_000).toISOString(),
        refresh: {
          client_id: 'client-1',
          refresh_token: 'refresh-token-1',
          token_endpoint: `${tokenEndpoint.url}/token`,
          token_endpoint_auth: { type: 'client_secret_basic', client_secret: 'client-secret-1' },
          scope: 'issues:read',
          resource: oauthServer.url,
        },
      },
    });
    // no credential_id: the one credential of the session's vaults whose URL is the server's applies
    const agent = await h.client.beta.agents.create({
      model: FAKE_MODEL,
      tools: [{ type: 'mcp', server_label: 'tracker', transport: { type: 'http', server_url: oauthServer.url } }],
    });
    const session = await h.client.beta.agents.sessions.create({ agent_id: agent.id, environment: { type: 'none' }, vault_ids: [vault.id] });

    for (const text of ['CALL_TOOL tracker__echo {"message":"first"}', 'CALL_TOOL tracker__echo {"message":"second"}']) {
      const events = await turn(session.id, text);
      expect(events.at(-1)!.type).toBe('agent.session.turn.completed');
      expect(textOf(events as never)).toContain('TOOL-RESULT-SEEN: echo:');
    }
    // refreshed once (the second turn used the stored new token), with the credential's client auth, scope and resource
    expect(tokenRequests).toHaveLength(1);
    expect(tokenRequests[0].form).toMatchObject({ grant_type: 'refresh_token', refresh_token: 'refresh-token-1', scope: 'issues:read', resource: oauthServer.url });
    expect(oauthServer.calls.map((c) => c.args)).toEqual([{ message: 'first' }, { message: 'second' }]);
    expect(new Set(oauthServer.authorizations)).toEqual(new Set(['Bearer fresh-access-token-1']));

    // the credential shows its new expiry; its secrets are still never returned
    const after = await h.client.beta.agents.vaults.credentials.retrieve(cred.id, { vault_id: vault.id });
    const auth = after.auth as { expires_at: string | null };
    expect(new Date(auth.expires_at!).getTime()).toBeGreaterThan(Date.now() + 3_000_000);
    expect(JSON.stringify(after)).not.toMatch(/fresh-access-token|refresh-token|client-secret/);
  });

  it('fails the turn with a clear error when the credential named by credential_id is not in the session vaults', async () => {
    const vault = await h.client.beta.agents.vaults.create({ name: 'elsewhere' });
    const cred = await h.client.beta.agents.vaults.credentials.create(vault.id, { name: 'x', auth: { type: 'static_bearer', mcp_server_url: bearerServer.url, token: 'vault-bearer-token' } });
    const agent = await h.client.beta.agents.create({
      model: FAKE_MODEL,
      tools: [{ type: 'mcp', server_label: 'docs', transport: { type: 'http', server_url: bearerServer.url }, credential_id: cred.id }],
    });
    const session = await h.client.beta.agents.sessions.create({ agent_id: agent.id, environment: { type: 'none' } });
    const events = await turn(session.id, 'hello');
    const failed = events.at(-1) as { type: string; turn: { error: { message: string } } };
    expect(failed.type).toBe('agent.session.turn.failed');
    expect(failed.turn.error.message).toContain(`credential ${cred.id} is not in the session's vaults`);
  });

  it('starts a stdio MCP server inside the environment sandbox for the turn, with its env, cwd and allowed_tools', async () => {
    // a minimal stdio MCP server for the system's node, seeded into the workspace
    const server = stdioMcpServer({
      name: 'local',
      prelude: `const fs = require('fs');`,
      tools: [
        { name: 'where', description: 'Where the server runs', properties: { probe: { type: 'string' } } },
        { name: 'hidden', description: 'Not allowed' },
      ],
      call: `answer(JSON.stringify({ cwd: process.cwd(), notes: fs.readFileSync('notes.md', 'utf8'), token: process.env.LOCAL_TOKEN, hostVisible: fs.existsSync(msg.params.arguments.probe) }));`,
    });
    const hostDir = mkdtempSync(join(tmpdir(), 'svc-host-only-'));
    const script = `mcp-${Date.now().toString(36)}-${process.pid}.js`;
    try {
      const session = await h.client.beta.agents.sessions.create({
        agent: {
          model: FAKE_MODEL,
          tools: [{ type: 'mcp', server_label: 'local', transport: { type: 'stdio', command: 'node', args: [script], cwd: '/workspace', env: { LOCAL_TOKEN: 'from-env' } }, allowed_tools: ['where'] }],
        },
        environment: {
          type: 'openai_hosted',
          files: [
            { type: 'inline', path: `/workspace/${script}`, data: Buffer.from(server).toString('base64') },
            { type: 'inline', path: '/workspace/notes.md', data: Buffer.from('seeded').toString('base64') },
          ],
        },
      });
      const before = modelRequests(h.fake).length;
      const events = await turn(session.id, `CALL_TOOL local__where ${JSON.stringify({ probe: hostDir })}`);
      expect(events.at(-1)!.type).toBe('agent.session.turn.completed');
      const seen = /TOOL-RESULT-SEEN: (\{.*\})/.exec(textOf(events as never));
      expect(seen, textOf(events as never)).not.toBeNull();
      // in the session's workspace, with its env, and blind to the host's folders
      expect(JSON.parse(seen![1])).toEqual({ cwd: '/work', notes: 'seeded', token: 'from-env', hostVisible: false });
      const offered = modelRequests(h.fake).slice(before).map((r) => JSON.stringify(r.body.tools ?? []));
      expect(offered[0]).toContain('local__where');
      expect(offered[0]).not.toContain('local__hidden');
      // the server lived for the run only
      await expect.poll(() => processesMentioning(script).length, { timeout: 10_000 }).toBe(0);
    } finally {
      rmSync(hostDir, { recursive: true, force: true });
    }
  });

  it("gives a stdio MCP server the environment variables its env_vars name, from the environment's env, and shows them to neither the model nor a log", async () => {
    const SECRET = `env-var-secret-${process.pid}-${Date.now().toString(36)}`;
    // the server answers with a digest of what it received: the model may see that, never the value
    const server = stdioMcpServer({
      name: 'vars',
      prelude: `const { createHash } = require('crypto');`,
      tools: [{ name: 'probe', description: 'What the server got' }],
      call: `answer(JSON.stringify({ token: createHash('sha256').update(process.env.API_TOKEN ?? '').digest('hex'), region: process.env.REGION ?? null, unnamed: process.env.UNNAMED ?? null }));`,
    });
    const script = `vars-${Date.now().toString(36)}-${process.pid}.js`;
    const stdio = { type: 'stdio' as const, command: 'node', args: [script], cwd: '/workspace', env_vars: ['API_TOKEN', 'REGION'] };
    const environment = {
      type: 'openai_hosted' as const,
      env: { API_TOKEN: SECRET, REGION: 'eu-west', UNNAMED: 'not-named-by-env_vars' },
      files: [{ type: 'inline' as const, path: `/workspace/${script}`, data: Buffer.from(server).toString('base64') }],
    };
    const logged: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      logged.push(String(chunk));
      return (write as (...a: unknown[]) => boolean)(chunk, ...rest);
    }) as typeof process.stderr.write;
    try {
      const session = await h.client.beta.agents.sessions.create({ agent: { model: FAKE_MODEL, tools: [{ type: 'mcp', server_label: 'vars', transport: stdio }] }, environment });
      // the names are echoed as a list; the values never are
      expect((session.agent.tools[0] as { transport: { env_vars: string[] } }).transport.env_vars).toEqual(['API_TOKEN', 'REGION']);
      expect(JSON.stringify(session)).not.toContain(SECRET);
      const before = modelRequests(h.fake).length;
      const events = await turn(session.id, 'CALL_TOOL vars__probe {}');
      expect(events.at(-1)!.type).toBe('agent.session.turn.completed');
      const seen = /TOOL-RESULT-SEEN: (\{.*\})/.exec(textOf(events as never));
      expect(seen, textOf(events as never)).not.toBeNull();
      expect(JSON.parse(seen![1])).toEqual({ token: createHash('sha256').update(SECRET).digest('hex'), region: 'eu-west', unnamed: null });
      // the value reached the server process only
      expect(JSON.stringify(modelRequests(h.fake).slice(before).map((r) => r.body))).not.toContain(SECRET);
      expect(JSON.stringify(events)).not.toContain(SECRET);
      expect(JSON.stringify((await h.client.beta.agents.sessions.items.list(session.id)).data)).not.toContain(SECRET);
    } finally {
      process.stderr.write = write;
    }
    expect(logged.join('')).not.toContain(SECRET);

    // a name the environment's env lacks is refused at creation, naming the entry; nothing is left behind
    const sessionsBefore = (await h.client.beta.agents.sessions.list()).data.length;
    const refused = await h.client.beta.agents.sessions
      .create({ agent: { model: FAKE_MODEL, tools: [{ type: 'mcp', server_label: 'vars', transport: { ...stdio, env_vars: ['API_TOKEN', 'MISSING'] } }] }, environment })
      .catch((e: unknown) => e);
    expect(refused).toMatchObject({ status: 400, param: 'agent.tools[0].transport.env_vars[1]' });
    expect((refused as Error).message).toContain('the environment\'s env has no variable "MISSING"');
    expect((await h.client.beta.agents.sessions.list()).data.length).toBe(sessionsBefore);
  });

  it('refuses a stdio MCP server in a session without an environment (400)', async () => {
    const agent = await h.client.beta.agents.create({ model: FAKE_MODEL, tools: [{ type: 'mcp', server_label: 'local', transport: { type: 'stdio', command: 'my-mcp', cwd: '/workspace' } }] });
    const refused = await h.client.beta.agents.sessions.create({ agent_id: agent.id, environment: { type: 'none' } }).catch((e: { status?: number; message?: string }) => e);
    expect((refused as { status?: number }).status).toBe(400);
    expect((refused as { message?: string }).message).toContain("agent.tools[0].transport: a stdio MCP server runs in the session's environment");
    expect((await h.client.beta.agents.sessions.list()).data.filter((s) => s.agent.id === agent.id)).toEqual([]);
  });
});
