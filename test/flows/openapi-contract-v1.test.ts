import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { collect, FAKE_MODEL, rawEvents, startAgentsHarness, type AgentsHarness } from '../support/agents.ts';

/**
 * The API reference of the agents API against real answers: every `/v1` operation (and the extension routes the
 * agents API serves under `/api`) is documented with a summary, a description and the schema of its success answer,
 * and the answers of a real server — an agent, an environment template, sessions with a turn (the fake model, a
 * function tool, a hosted sandbox leaving an artifact), their event stream, files, vaults, skills, memory stores,
 * keys, providers, models and usage — are valid against the schemas /openapi.json publishes.
 */
type Operation = { summary?: string; description?: string; responses: Record<string, { content?: Record<string, { schema?: unknown }> }> };
type Spec = { paths: Record<string, Record<string, Operation>> };

/** The `/api` operations the agents API serves (extension routes and the function-tool endpoint). */
const EXTENSION_PATHS = [/^\/api\/models$/, /^\/api\/sessions\/\{session_id\}\/model$/, /^\/api\/keys/, /^\/api\/providers/, /^\/api\/usage/, /^\/api\/agent-sessions\//];
const ours = (path: string) => path.startsWith('/v1/') || EXTENSION_PATHS.some((re) => re.test(path));

/** The nested `$schema` the converter writes for each schema is not a 2020-12 keyword in that position. */
function withoutDialect(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withoutDialect);
  if (schema === null || typeof schema !== 'object') return schema;
  return Object.fromEntries(Object.entries(schema).filter(([k]) => k !== '$schema').map(([k, v]) => [k, withoutDialect(v)]));
}

describe('the /v1 API reference against real answers', () => {
  let h: AgentsHarness;
  let spec: Spec;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  const compiled = new Map<string, ValidateFunction>();
  const b64 = (s: string) => Buffer.from(s).toString('base64');

  beforeAll(async () => {
    h = await startAgentsHarness();
    spec = (await (await fetch(`${h.svc.url}/openapi.json`)).json()) as Spec;
  }, 60_000);
  afterAll(() => h?.stop());

  function validator(method: string, path: string, status: number, media: string): ValidateFunction {
    const key = `${method} ${path} ${status} ${media}`;
    let validate = compiled.get(key);
    if (!validate) {
      const schema = spec.paths[path]?.[method]?.responses[String(status)]?.content?.[media]?.schema;
      expect(schema, `${key}: a documented schema`).toBeTruthy();
      validate = ajv.compile(withoutDialect(schema) as object);
      compiled.set(key, validate);
    }
    return validate;
  }

  /** Checks `body` against the documented success answer of the operation. */
  function conforms(method: string, path: string, body: unknown, status = 200, media = 'application/json'): void {
    const validate = validator(method, path, status, media);
    expect(validate(body) ? [] : { body, errors: validate.errors }, `${method.toUpperCase()} ${path}`).toEqual([]);
  }

  /** Calls the operation (`path` as documented, `args` fill its parameters) and checks the answer against its schema. */
  async function call(method: 'get' | 'post' | 'put' | 'delete', path: string, args: Record<string, string> = {}, init: { json?: unknown; body?: FormData; query?: string; status?: number } = {}) {
    const url = path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(args[name] ?? `missing-${name}`)) + (init.query ? `?${init.query}` : '');
    const res = await h.svc.api(url, { method: method.toUpperCase(), ...(init.json !== undefined ? { json: init.json } : {}), ...(init.body ? { body: init.body } : {}) });
    const status = init.status ?? 200;
    const text = await res.text();
    expect(res.status, `${method.toUpperCase()} ${url}: ${text.slice(0, 300)}`).toBe(status);
    if (status === 204) return undefined;
    const body = JSON.parse(text);
    conforms(method, path, body, status);
    return body;
  }

  it('documents every operation with a summary, a description and its success answer', () => {
    const missing: string[] = [];
    let count = 0;
    for (const [path, methods] of Object.entries(spec.paths)) {
      if (!ours(path)) continue;
      for (const [method, op] of Object.entries(methods)) {
        count++;
        const where = `${method.toUpperCase()} ${path}`;
        if (!op.summary) missing.push(`${where}: summary`);
        if (!op.description) missing.push(`${where}: description`);
        const [status, success] = Object.entries(op.responses).find(([s]) => s.startsWith('2'))!;
        const json = success.content?.['application/json'];
        // 204s have no body, downloads and streams are not JSON, and the MCP endpoint answers JSON-RPC
        if (status !== '204' && json && !path.endsWith('/function-tools/mcp') && !json.schema) missing.push(`${where}: response schema`);
        if (!op.responses['401']) missing.push(`${where}: 401`);
      }
    }
    expect(missing).toEqual([]);
    expect(count).toBeGreaterThan(80);
  });

  it('documents the event stream with the schema of its events', () => {
    expect(spec.paths['/v1/agents/sessions/{session_id}/events']!.get!.responses['200']!.content!['text/event-stream']!.schema).toBeTruthy();
    expect(spec.paths['/v1/files/{file_id}/content']!.get!.responses['200']!.content).toHaveProperty(['application/octet-stream']);
    expect(spec.paths['/v1/agents/sessions/{session_id}/events']!.post!.responses).toHaveProperty('204');
  });

  it('tells an answer that does not match its schema', () => {
    const validate = validator('get', '/v1/agents/{agent_id}', 200, 'application/json');
    const agent = { id: 'agent_1', object: 'agent', created_at: 1, updated_at: 1, instructions: null, metadata: {}, model: 'm', name: null, tools: [] };
    const settings = { multi_agent: { enabled: false, max_concurrent_subagents: null }, reasoning: { effort: 'medium', summary: null }, service_tier: 'auto', text: { format: { type: 'text' }, verbosity: 'medium' } };
    expect(validate({ ...agent, ...settings })).toBe(true);
    expect(validate({ ...agent, ...settings, object: 'agent.deleted' })).toBe(false);
    expect(validate({ ...agent, ...settings, tools: [{ type: 'function', name: 'f' }] })).toBe(false);
    expect(validate({ ...agent, created_at: 1.5, ...settings })).toBe(false);
    expect(validate(agent)).toBe(false);
  });

  it('answers agents as documented', async () => {
    const created = await call('post', '/v1/agents', {}, {
      json: {
        model: FAKE_MODEL,
        name: 'contract',
        metadata: { team: 'docs' },
        multi_agent: { enabled: true },
        reasoning: { summary: 'auto' },
        text: { format: { type: 'json_schema', schema: { type: 'object' } }, verbosity: 'low' },
        tools: [
          { type: 'function', name: 'lookup', description: 'Look up', parameters: { type: 'object', properties: {} } },
          { type: 'tool_search' },
          { type: 'programmatic_tool_calling' },
          { type: 'web_search', location: { country: 'FR' } },
          { type: 'mcp', server_label: 'docs', transport: { type: 'http', server_url: 'https://mcp.example.com/mcp', headers: { 'X-Team': 'blue' } } },
          { type: 'mcp', server_label: 'local', transport: { type: 'stdio', command: 'node', cwd: '/workspace' } },
        ],
        agent_toolset: {
          configs: [{ name: 'run_command', permission_policy: { type: 'always_ask' } }],
          mcp_toolsets: [{ mcp_server_name: 'docs', configs: [{ name: 'delete_page', enabled: false }] }],
        },
      },
    });
    expect(created.agent_toolset.mcp_toolsets[0].default_config).toEqual({ permission_policy: { type: 'always_ask' } });
    await call('get', '/v1/agents/{agent_id}', { agent_id: created.id });
    await call('post', '/v1/agents/{agent_id}', { agent_id: created.id }, { json: { name: null, metadata: null } });
    const page = await call('get', '/v1/agents', {}, { query: 'limit=2' });
    expect(page.data.length).toBeGreaterThan(0);
    expect((await call('delete', '/v1/agents/{agent_id}', { agent_id: created.id })).deleted).toBe(true);
  });

  it('answers environment templates as documented', async () => {
    const tpl = await call('post', '/v1/agents/environments/templates', {}, {
      json: { name: 'tpl', files: [{ type: 'inline', path: '/workspace/a.md', data: b64('a') }], network: { access: 'disabled' }, packages: { npm: ['zod'] }, env: { TOKEN: 'secret' } },
    });
    await call('get', '/v1/agents/environments/templates/{template_id}', { template_id: tpl.id });
    await call('post', '/v1/agents/environments/templates/{template_id}', { template_id: tpl.id }, { json: { name: null } });
    await call('get', '/v1/agents/environments/templates');
    await call('delete', '/v1/agents/environments/templates/{template_id}', { template_id: tpl.id });
  });

  it('answers sessions, a turn, its items and its event stream as documented', async () => {
    const agent = await call('post', '/v1/agents', {}, { json: { model: FAKE_MODEL } });
    const session = await call('post', '/v1/agents/sessions', {}, { json: { agent_id: agent.id, environment: { type: 'none' }, metadata: { n: '1' } } });
    const stream = rawEvents(h, session.id);
    expect((await stream.response).status).toBe(200);
    await call('post', '/v1/agents/sessions/{session_id}/events', { session_id: session.id }, { json: { events: [{ type: 'agent.session.input.message', input: [{ role: 'user', content: [{ type: 'input_text', text: 'hello' }] }] }] }, status: 204 });
    const turnEnd = await stream.until((f) => f.event === 'agent.session.turn.completed');
    await stream.until((f) => f.event === 'agent.session.idle' && stream.frames.indexOf(f) > stream.frames.indexOf(turnEnd));
    await stream.close();
    const types = new Set(stream.frames.map((f) => f.event));
    expect([...types]).toEqual(expect.arrayContaining(['agent.session.turn.created', 'agent.session.turn.item.added', 'agent.session.turn.output_text.delta', 'agent.session.turn.item.done', 'agent.session.idle']));
    for (const frame of stream.frames) conforms('get', '/v1/agents/sessions/{session_id}/events', frame.data, 200, 'text/event-stream');

    const ids = { session_id: session.id };
    await call('get', '/v1/agents/sessions/{session_id}', ids);
    await call('post', '/v1/agents/sessions/{session_id}', ids, { json: { metadata: { n: '2' } } });
    await call('get', '/v1/agents/sessions', {}, { query: `agent_id=${agent.id}` });
    const turns = await call('get', '/v1/agents/sessions/{session_id}/turns', ids);
    expect(turns.data).toHaveLength(1);
    await call('get', '/v1/agents/sessions/{session_id}/turns/{turn_id}', { ...ids, turn_id: turns.data[0].id });
    const items = await call('get', '/v1/agents/sessions/{session_id}/items', ids, { query: 'order=asc' });
    expect(items.data.map((i: { role: string }) => i.role)).toEqual(['user', 'assistant']);
    await call('get', '/v1/agents/sessions/{session_id}/subagents', ids);
    await call('get', '/v1/agents/sessions/{session_id}/artifacts', ids);
    const model = await call('get', '/api/sessions/{session_id}/model', ids);
    expect(model.model).toBe(FAKE_MODEL);
    await call('post', '/api/sessions/{session_id}/model', ids, { json: { model: 'svc/demo/echo' } });
    expect((await call('delete', '/v1/agents/sessions/{session_id}', ids)).object).toBe('agent.session.deleted');
  });

  it('answers the items of a function-tool turn as documented', async () => {
    const weather = { type: 'function', name: 'get_weather', description: 'The weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } };
    const agent = await call('post', '/v1/agents', {}, { json: { model: FAKE_MODEL, tools: [weather] } });
    const session = await call('post', '/v1/agents/sessions', {}, { json: { agent_id: agent.id, environment: { type: 'none' } } });
    const events = await collect(h.client.beta.agents.sessions.stream(session.id, { input: 'CALL_TOOL get_weather {"city":"Paris"}', toolHandlers: { get_weather: () => ({ temp_c: 21 }) } }));
    expect(events.at(-1)!.type).toBe('agent.session.idle');
    const items = await call('get', '/v1/agents/sessions/{session_id}/items', { session_id: session.id }, { query: 'order=asc' });
    expect(items.data.map((i: { type: string }) => i.type)).toEqual(expect.arrayContaining(['function_call', 'function_call_output']));
    // a session created with stream: true answers the event stream
    const res = await h.svc.api('/v1/agents/sessions', { method: 'POST', json: { agent_id: agent.id, environment: { type: 'none' }, stream: true } });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const data = (await res.text()).split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)));
    expect(data[0].type).toBe('agent.session.created');
    for (const e of data) conforms('get', '/v1/agents/sessions/{session_id}/events', e, 200, 'text/event-stream');
  });

  it('answers the subagents of a session, their turns and items as documented', async () => {
    const agent = await call('post', '/v1/agents', {}, { json: { model: FAKE_MODEL, multi_agent: { enabled: true } } });
    const session = await call('post', '/v1/agents/sessions', {}, { json: { agent_id: agent.id, environment: { type: 'none' } } });
    const stream = rawEvents(h, session.id);
    expect((await stream.response).status).toBe(200);
    await collect(h.client.beta.agents.sessions.stream(session.id, { input: `CALL_TOOL spawn_subagent ${JSON.stringify({ task: 'count the moons', name: 'scout' })}` }));
    await stream.until((f) => f.event === 'agent.session.idle');
    await stream.close();
    expect(stream.frames.map((f) => f.event)).toContain('agent.session.subagent.closed');
    for (const frame of stream.frames) conforms('get', '/v1/agents/sessions/{session_id}/events', frame.data, 200, 'text/event-stream');

    const ids = { session_id: session.id };
    const items = await call('get', '/v1/agents/sessions/{session_id}/items', ids);
    expect(items.data.map((i: { type: string }) => i.type)).toEqual(expect.arrayContaining(['create_subagent_call', 'agent_message']));
    const subagents = await call('get', '/v1/agents/sessions/{session_id}/subagents', ids);
    const sub = { ...ids, subagent_id: subagents.data[0].id };
    await call('get', '/v1/agents/sessions/{session_id}/subagents/{subagent_id}', sub);
    await call('get', '/v1/agents/sessions/{session_id}/subagents/{subagent_id}/items', sub);
    const turns = await call('get', '/v1/agents/sessions/{session_id}/subagents/{subagent_id}/turns', sub);
    const turn = { ...sub, turn_id: turns.data[0].id };
    expect(turns.data[0].subagent_id).toBe(sub.subagent_id);
    await call('get', '/v1/agents/sessions/{session_id}/subagents/{subagent_id}/turns/{turn_id}', turn);
    const turnItems = await call('get', '/v1/agents/sessions/{session_id}/subagents/{subagent_id}/turns/{turn_id}/items', turn);
    expect(turnItems.data.length).toBeGreaterThan(0);
  });

  it('answers a session waiting on its subagent\'s tool approval as documented', async () => {
    const agent_toolset = { configs: [{ name: 'fs_write', permission_policy: { type: 'always_ask' } }] };
    const agent = await call('post', '/v1/agents', {}, { json: { model: FAKE_MODEL, agent_toolset, multi_agent: { enabled: true } } });
    const session = await call('post', '/v1/agents/sessions', {}, { json: { agent_id: agent.id, environment: { type: 'openai_hosted' } } });
    const ids = { session_id: session.id };
    const stream = rawEvents(h, session.id);
    expect((await stream.response).status).toBe(200);
    const task = 'CALL_TOOL fs_write {"path":"note.txt","content":"hi"}';
    const message = { type: 'agent.session.input.message', input: [{ role: 'user', content: [{ type: 'input_text', text: `CALL_TOOL spawn_subagent ${JSON.stringify({ task })}` }] }] };
    await call('post', '/v1/agents/sessions/{session_id}/events', ids, { json: { events: [message] }, status: 204 });
    await stream.until((f) => f.event === 'agent.session.requires_action');
    const waiting = await call('get', '/v1/agents/sessions/{session_id}', ids);
    expect(waiting.required_actions).toEqual([expect.objectContaining({ type: 'tool_approval', subagent_id: expect.any(String) })]);
    const deny = { type: 'tool_approval', id: waiting.required_actions[0].id, approve: false, message: 'no' };
    await call('post', '/v1/agents/sessions/{session_id}/events', ids, { json: { events: [deny] }, status: 204 });
    await stream.until((f) => f.event === 'agent.session.idle');
    await stream.close();
    for (const frame of stream.frames) conforms('get', '/v1/agents/sessions/{session_id}/events', frame.data, 200, 'text/event-stream');
  });

  it('answers a hosted environment, its files and the artifacts of a turn as documented', async () => {
    const agent = await call('post', '/v1/agents', {}, { json: { model: FAKE_MODEL } });
    const session = await call('post', '/v1/agents/sessions', {}, {
      json: { agent_id: agent.id, environment: { type: 'openai_hosted', files: [{ type: 'inline', path: '/workspace/notes.md', data: b64('notes') }] } },
    });
    const env = { environment_id: session.environment.id };
    await call('get', '/v1/agents/environments/{environment_id}', env);
    await call('post', '/v1/agents/environments/{environment_id}/files', env, { json: { type: 'inline', path: '/workspace/more.md', data: b64('more') } });
    const files = await call('get', '/v1/agents/environments/{environment_id}/files', env, { query: 'limit=1' });
    expect(files.has_more).toBe(true);
    const command = `CALL_TOOL run_command ${JSON.stringify({ command: 'sh', args: ['-c', 'echo hi > out.txt'] })}`;
    const events = await collect(h.client.beta.agents.sessions.stream(session.id, { input: command }));
    expect(events.at(-2)!.type).toBe('agent.session.turn.completed');
    const ids = { session_id: session.id };
    const artifacts = await call('get', '/v1/agents/sessions/{session_id}/artifacts', ids);
    expect(artifacts.data.map((a: { path: string }) => a.path)).toEqual(['/workspace/out.txt']);
    await call('get', '/v1/agents/sessions/{session_id}/artifacts/{artifact_id}', { ...ids, artifact_id: artifacts.data[0].id });
    await call('delete', '/v1/agents/sessions/{session_id}/artifacts/{artifact_id}', { ...ids, artifact_id: artifacts.data[0].id });
    await call('delete', '/v1/agents/sessions/{session_id}', ids);
  }, 60_000);

  it('answers files, skills and vaults as documented', async () => {
    const upload = new FormData();
    upload.append('file', new Blob(['file bytes']), 'input.txt');
    upload.append('purpose', 'user_data');
    upload.append('expires_after[anchor]', 'created_at');
    upload.append('expires_after[seconds]', '3600');
    const file = await call('post', '/v1/files', {}, { body: upload });
    expect(file.expires_at).toBeGreaterThan(file.created_at);
    await call('get', '/v1/files/{file_id}', { file_id: file.id });
    await call('get', '/v1/files', {}, { query: 'purpose=user_data' });
    await call('delete', '/v1/files/{file_id}', { file_id: file.id });

    const skillUpload = (description: string) => {
      const form = new FormData();
      form.append('files[]', new Blob([`---\nname: contract\ndescription: ${description}\n---\nbody\n`]), 'contract/SKILL.md');
      return form;
    };
    const skill = await call('post', '/v1/skills', {}, { body: skillUpload('first') });
    const ids = { skill_id: skill.id };
    const two = skillUpload('second');
    two.append('default', 'true');
    const version = await call('post', '/v1/skills/{skill_id}/versions', ids, { body: two });
    await call('get', '/v1/skills/{skill_id}/versions/{version}', { ...ids, version: version.version });
    await call('get', '/v1/skills/{skill_id}/versions', ids);
    await call('post', '/v1/skills/{skill_id}', ids, { json: { default_version: '1' } });
    await call('get', '/v1/skills/{skill_id}', ids);
    await call('get', '/v1/skills');
    expect((await call('delete', '/v1/skills/{skill_id}/versions/{version}', { ...ids, version: '2' })).version).toBe('2');
    await call('delete', '/v1/skills/{skill_id}', ids);

    const vault = await call('post', '/v1/vaults', {}, { json: { name: 'contract', metadata: { a: 'b' } } });
    const v = { vault_id: vault.id };
    await call('get', '/v1/vaults/{vault_id}', v);
    await call('get', '/v1/vaults', {}, { query: 'status=active' });
    const oauth = await call('post', '/v1/vaults/{vault_id}/credentials', v, {
      json: {
        name: 'oauth',
        auth: {
          type: 'mcp_oauth',
          mcp_server_url: 'https://mcp.example.com/mcp',
          access_token: 'at',
          expires_at: '2030-01-01T00:00:00Z',
          refresh: { client_id: 'c', refresh_token: 'rt', token_endpoint: 'https://auth.example.com/token', token_endpoint_auth: { type: 'client_secret_post', client_secret: 's' } },
        },
      },
    });
    const bearer = await call('post', '/v1/vaults/{vault_id}/credentials', v, { json: { name: 'bearer', auth: { type: 'static_bearer', mcp_server_url: 'https://mcp.example.com/other', token: 't' } } });
    await call('get', '/v1/vaults/{vault_id}/credentials/{credential_id}', { ...v, credential_id: oauth.id });
    await call('post', '/v1/vaults/{vault_id}/credentials/{credential_id}', { ...v, credential_id: bearer.id }, { json: { auth: { type: 'static_bearer', token: 't2' } } });
    await call('get', '/v1/vaults/{vault_id}/credentials', v);
    await call('delete', '/v1/vaults/{vault_id}/credentials/{credential_id}', { ...v, credential_id: bearer.id });
    await call('delete', '/v1/vaults/{vault_id}', v);
  });

  it('answers memory stores as documented', async () => {
    const store = await call('post', '/v1/memory_stores', {}, { json: { name: 'contract-notes', description: 'notes', metadata: { a: 'b' } } });
    const s = { memory_store_id: store.id };
    await call('get', '/v1/memory_stores/{memory_store_id}', s);
    await call('post', '/v1/memory_stores/{memory_store_id}', s, { json: { description: 'more notes' } });
    await call('get', '/v1/memory_stores');
    const memory = await call('post', '/v1/memory_stores/{memory_store_id}/memories', s, { json: { path: '/facts.md', content: 'first' } });
    const m = { ...s, memory_id: memory.id };
    await call('get', '/v1/memory_stores/{memory_store_id}/memories/{memory_id}', m);
    await call('post', '/v1/memory_stores/{memory_store_id}/memories/{memory_id}', m, { json: { content: 'second', precondition: { type: 'content_sha256', content_sha256: memory.content_sha256 } } });
    await call('get', '/v1/memory_stores/{memory_store_id}/memories', s, { query: 'view=full' });
    const versions = await call('get', '/v1/memory_stores/{memory_store_id}/memory_versions', s, { query: `memory_id=${memory.id}` });
    expect(versions.data).toHaveLength(2);
    const first = versions.data.at(-1);
    await call('get', '/v1/memory_stores/{memory_store_id}/memory_versions/{memory_version_id}', { ...s, memory_version_id: first.id });
    const restored = await call('post', '/v1/memory_stores/{memory_store_id}/memory_versions/{memory_version_id}/restore', { ...s, memory_version_id: first.id });
    expect(restored.content).toBe('first');
    await call('delete', '/v1/memory_stores/{memory_store_id}/memories/{memory_id}', m);
    await call('delete', '/v1/memory_stores/{memory_store_id}', s);
  });

  it('answers keys, providers, models and usage as documented', async () => {
    const key = await call('post', '/api/keys', {}, { json: { name: 'contract' }, status: 201 });
    expect(key.secret).toBeTruthy();
    await call('get', '/api/keys');
    await call('delete', '/api/keys/{key_id}', { key_id: key.id }, { status: 204 });

    const providers = await call('get', '/api/providers');
    expect(providers.providers.length).toBeGreaterThan(1);
    const p = { provider: 'openai' };
    await call('put', '/api/providers/{provider}/key', p, { json: { key: 'sk-contract-0123456789' } });
    await call('get', '/api/providers/{provider}', p);
    await call('get', '/api/providers/{provider}/models', p);
    await call('delete', '/api/providers/{provider}/key', p, { status: 204 });

    const models = await call('get', '/v1/models');
    expect(models.data.map((m: { id: string }) => m.id)).toContain('svc/demo/demo');
    await call('get', '/api/models');
    // the turns above reported usage
    const usage = await call('get', '/api/usage');
    expect(usage.events).toBeGreaterThan(0);
    await call('get', '/api/usage/events', {}, { query: 'limit=5' });
  });
});
