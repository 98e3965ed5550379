import { chmod, mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { skillFolderForm } from '../../src/cli/client/skill-folder.ts';
import { withSystem } from '../../src/db/index.ts';
import { server } from '../support/backends.ts';
import type { TestSvc } from '../support/svc.ts';
import { keyOf, startOperatorSvc } from '../support/tenants.ts';

/**
 * Kits through the real HTTP surface, across two tenants on the PostgreSQL server: a pool with two profiles, an
 * imported skill (with a script) and an automation whose profile carries an MCP header token is saved as a kit; the
 * public read shows no secret; a second tenant's copy plan says `new`, the copy creates everything (the automation
 * stopped), a second copy is `already_exists` and the plan then says `unchanged`; republish advances the version.
 */
let svc: TestSvc;
let cleanup: () => Promise<void>;
let globex: string;
let member: string;

const TOKEN = 'sk-live-4f9c2b7e1d8a6035c4b2';
const QUERY_TOKEN = 'q9Zx7Lk2Pm4Nb6Vc8Xa1Sd3Fg5Hj';

beforeAll(async () => {
  const db = await server.setup();
  cleanup = db.cleanup;
  svc = await startOperatorSvc({ DATABASE_URL: db.url });
  globex = await keyOf(svc, 'globex');
  member = await keyOf(svc, 'default', 'member');
  const dir = await mkdtemp(join(tmpdir(), 'kit-skill-'));
  await mkdir(join(dir, 'scripts'));
  await writeFile(join(dir, 'SKILL.md'), '---\nname: fact-check\ndescription: Checks claims against sources.\n---\nRun scripts/check.sh.\n');
  await writeFile(join(dir, 'scripts', 'check.sh'), '#!/bin/sh\necho checked\n');
  await chmod(join(dir, 'scripts', 'check.sh'), 0o755);
  const dry = await svc.api('/api/skills/import', { method: 'POST', body: await skillFolderForm(dir) });
  expect(dry.status).toBe(200);
  expect((await svc.api(`/api/skills/import/${((await dry.json()) as { stagingId: string }).stagingId}`, { method: 'POST' })).status).toBe(201);
  const analyst = {
    name: 'analyst',
    runtime: 'general',
    model: 'demo:echo',
    systemPrompt: 'You check facts.',
    skills: ['fact-check'],
    mcpServers: [{ name: 'tracker', url: `https://mcp.example.com/mcp?team=blue&api_key=${QUERY_TOKEN}`, headers: { Authorization: `Bearer ${TOKEN}`, 'X-Team': 'blue' } }],
  };
  for (const p of [analyst, { name: 'writer', runtime: 'general', model: 'demo:echo' }]) expect((await svc.api('/api/profiles', { method: 'POST', json: p })).status).toBe(201);
  expect((await svc.api('/api/pools', { method: 'POST', json: { name: 'newsroom', description: 'Desk', members: [{ profile: 'analyst', role: 'lead' }, { profile: 'writer' }] } })).status).toBe(201);
  expect((await svc.api('/api/automations', { method: 'POST', json: { name: 'morning-brief', profile: 'analyst', prompt: 'brief me', cron: '0 9 * * *' } })).status).toBe(201);
});
afterAll(async () => {
  await svc?.stop();
  await cleanup?.();
});

const call = async (method: string, path: string, o: { json?: unknown; key?: string | null } = {}) => {
  const res = await svc.api(path, { method, ...(o.json !== undefined ? { json: o.json } : {}), ...(o.key !== undefined ? { key: o.key } : {}) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, text };
};
const statuses = (plan: { assets: Array<{ kind: string; name: string; status: string }> }) => plan.assets.map((a) => `${a.kind}:${a.name}:${a.status}`);

describe('kits', () => {
  let kit: any;

  it('saves a pool as a kit (admin only, slug unique) with its profiles, skill and automation, secrets stripped', async () => {
    const body = { slug: 'newsroom', label: 'Newsroom', description: 'A fact-checking desk', source: { pool: 'newsroom' } };
    expect((await call('POST', '/api/templates', { json: body, key: member })).status).toBe(403);
    const created = await call('POST', '/api/templates', { json: body });
    expect(created.status).toBe(201);
    kit = created.body;
    expect(kit).toMatchObject({ id: expect.stringMatching(/^kit-[a-z0-9]+$/), slug: 'newsroom', kind: 'pool', source: { pool: 'newsroom' }, version: 1, authorHandle: 'default', counts: { profiles: 2, skills: 1, automations: 1 } });
    expect(kit.manifest.stripped.sort()).toEqual(['profiles.analyst.mcpServers.tracker.headers.Authorization', 'profiles.analyst.mcpServers.tracker.url?api_key']);
    expect(kit.manifest.automations).toEqual([{ name: 'morning-brief', profile: 'analyst', prompt: 'brief me', cron: '0 9 * * *', timezone: 'UTC', sessionMode: 'fresh', overlap: 'skip', maxConsecutiveFailures: 5 }]);
    expect((await call('POST', '/api/templates', { json: body })).status).toBe(409);
  });

  it('shows the public reads no secret and no computed field, without a credential', async () => {
    for (const path of ['/api/public/templates/newsroom', `/api/public/kits/${kit.id}`]) {
      const res = await call('GET', path, { key: null });
      expect(res.status).toBe(200);
      expect(res.text).not.toContain(TOKEN);
      expect(res.text).not.toContain(QUERY_TOKEN);
      expect(JSON.stringify(res.body.manifest)).not.toMatch(/"(id|workerPlacement|nextRunAt|status|lastFiredAt|files|content)":/);
      const analyst = res.body.manifest.profiles.find((p: any) => p.name === 'analyst');
      expect(analyst.mcpServers[0].headers).toEqual({ Authorization: '', 'X-Team': 'blue' });
      expect(res.body.manifest.skills[0].resources).toEqual([expect.objectContaining({ path: 'scripts/check.sh', executable: true })]);
    }
    expect((await call('POST', `/api/public/kits/${kit.id}/events`, { json: { kind: 'view' }, key: null })).status).toBe(204);
    expect((await call('POST', `/api/public/kits/${kit.id}/events`, { json: { kind: 'stare' }, key: null })).status).toBe(400);
    expect((await call('POST', `/api/kits/${kit.id}/events`, { json: { kind: 'click' } })).status).toBe(204);
    expect((await call('GET', '/api/public/kits/kit-nope', { key: null })).status).toBe(404);
    expect((await call('GET', '/api/templates/newsroom')).body.stats).toEqual({ views: 1, clicks: 1 });
    expect((await call('GET', '/api/templates/newsroom', { key: globex })).body.stats).toBeUndefined();
    const viewer = await keyOf(svc, 'globex', 'viewer');
    expect(await call('GET', '/api/templates/newsroom?org=default', { key: viewer })).toMatchObject({ status: 403, body: { error: 'using kits needs role member or higher' } });
  });

  it('caps the anonymous event log per kit', async () => {
    const statusesSeen = new Set<number>();
    for (let i = 0; i < 125; i++) statusesSeen.add((await svc.api(`/api/public/kits/${kit.id}/events`, { method: 'POST', key: null, json: { kind: 'view' } })).status);
    expect([...statusesSeen].sort()).toEqual([204, 429]);
  });

  it('previews a manifest naming exactly one source, schedules only with a pool or agent', async () => {
    const preview = await call('POST', '/api/templates/preview', { json: { agent: 'analyst', schedules: [] } });
    expect(preview.status).toBe(200);
    expect(preview.body.manifest).toMatchObject({ kind: 'agent', root: 'analyst', automations: [], skills: [expect.objectContaining({ name: 'fact-check' })] });
    expect((await call('POST', '/api/templates/preview', { json: { pool: 'newsroom', agent: 'analyst' } })).body.error).toMatch(/exactly one of pool, agent, automation/);
    expect((await call('POST', '/api/templates/preview', { json: { source: { automation: 'morning-brief' }, schedules: ['morning-brief'] } })).body.error).toMatch(/^schedules: only with a pool or an agent/);
    expect((await call('POST', '/api/templates/preview', { json: {} })).status).toBe(400);
    expect((await call('POST', '/api/templates/preview', { json: { pool: 'ghost' } })).body).toEqual({ error: 'source.pool: unknown pool: ghost' });
  });

  it('copies into a second tenant: plan new, copy creates everything (automation stopped), again already_exists, plan unchanged', async () => {
    const before = await call('GET', '/api/templates/newsroom/copy-plan', { key: globex });
    expect(before.status).toBe(200);
    expect(statuses(before.body)).toEqual(['skill:fact-check:new', 'profile:analyst:new', 'profile:writer:new', 'pool:newsroom:new', 'automation:morning-brief:new']);

    const copy = await call('POST', '/api/templates/newsroom/copy', { key: globex });
    expect(copy.status).toBe(200);
    expect(copy.body).toMatchObject({ copied: true, targetName: 'newsroom', kit: { id: kit.id, version: 1 } });
    expect(copy.body.created).toEqual([
      { kind: 'skill', name: 'fact-check' },
      { kind: 'profile', name: 'analyst' },
      { kind: 'profile', name: 'writer' },
      { kind: 'pool', name: 'newsroom' },
      { kind: 'automation', name: 'morning-brief' },
    ]);
    const analyst = (await call('GET', '/api/profiles/analyst', { key: globex })).body;
    expect(analyst).toMatchObject({ skills: ['fact-check'], systemPrompt: 'You check facts.', mcpServers: [{ headers: { Authorization: '', 'X-Team': 'blue' } }] });
    expect(analyst.mcpServers[0].url).toBe('https://mcp.example.com/mcp?team=blue&api_key=');
    expect((await call('GET', '/api/skills/fact-check', { key: globex })).body).toMatchObject({ source: 'imported', resources: [{ path: 'scripts/check.sh', executable: true }] });
    const files = await withSystem(svc.server.built.database!.db, (tx) => sql<{ n: string }>`select count(*) as n from skill_files where tenant_id = 'globex' and skill_name = 'fact-check'`.execute(tx));
    expect(Number(files.rows[0].n)).toBe(1);
    expect((await call('GET', '/api/pools', { key: globex })).body).toEqual([expect.objectContaining({ name: 'newsroom', members: [{ profile: 'analyst', role: 'lead' }, { profile: 'writer', role: 'member' }] })]);
    expect((await call('GET', '/api/automations', { key: globex })).body).toEqual([expect.objectContaining({ name: 'morning-brief', profile: 'analyst', status: 'stopped', nextRunAt: null })]);

    expect((await call('POST', '/api/templates/newsroom/copy', { key: globex })).body).toMatchObject({ copied: false, reason: 'already_exists', targetName: 'newsroom' });
    const after = await call('GET', '/api/templates/newsroom/copy-plan', { key: globex });
    expect(statuses(after.body)).toEqual(['skill:fact-check:unchanged', 'profile:analyst:unchanged', 'profile:writer:unchanged', 'pool:newsroom:unchanged', 'automation:morning-brief:unchanged']);
    const copied = await call('GET', '/api/templates?scope=copied', { key: globex });
    expect(copied.body).toEqual([expect.objectContaining({ id: kit.id, authorHandle: 'default', authorName: expect.any(String), targetName: 'newsroom', copiedVersion: 1 })]);
    expect((await call('GET', '/api/templates', { key: globex })).body).toEqual([]);
  });

  it('plans a changed asset under a free name, and copies under a new target name', async () => {
    expect((await call('PUT', '/api/profiles/writer', { key: globex, json: { name: 'writer', runtime: 'general', model: 'demo:echo', systemPrompt: 'house style' } })).status).toBe(200);
    const plan = await call('GET', '/api/templates/newsroom/copy-plan?targetName=newsroom-b', { key: globex });
    expect(plan.body.assets.find((a: any) => a.name === 'writer')).toEqual({ kind: 'profile', name: 'writer', status: 'changed', targetName: 'writer-2' });
    expect(plan.body.assets.find((a: any) => a.kind === 'pool')).toEqual({ kind: 'pool', name: 'newsroom', status: 'new', targetName: 'newsroom-b' });
    const copy = await call('POST', '/api/templates/newsroom/copy', { key: globex, json: { targetName: 'newsroom-b' } });
    expect(copy.body.created).toEqual([{ kind: 'profile', name: 'writer-2' }, { kind: 'pool', name: 'newsroom-b' }]);
    expect((await call('GET', '/api/pools', { key: globex })).body.find((p: any) => p.name === 'newsroom-b').members).toEqual([{ profile: 'analyst', role: 'lead' }, { profile: 'writer-2', role: 'member' }]);
  });

  it("leaves another tenant's kit alone: no edit, delete or republish through its slug", async () => {
    for (const [method, path] of [['PATCH', '/api/templates/newsroom'], ['DELETE', '/api/templates/newsroom'], ['POST', '/api/templates/newsroom/republish']] as const) {
      expect(await call(method, path, { key: globex, ...(method === 'PATCH' ? { json: { label: 'mine now' } } : {}) })).toMatchObject({ status: 404, body: { error: 'unknown kit: newsroom' } });
    }
    expect((await call('GET', '/api/templates/newsroom')).body).toMatchObject({ label: 'Newsroom', version: 1 });
  });

  it('refuses to delete a built-in kit', async () => {
    expect((await call('POST', '/api/templates', { json: { slug: 'starter', label: 'Starter', source: { agent: 'writer' } } })).status).toBe(201);
    await withSystem(svc.server.built.database!.db, (tx) => sql`update kits set built_in = true where slug = 'starter'`.execute(tx));
    expect(await call('DELETE', '/api/templates/starter')).toEqual({ status: 403, body: { error: 'kit starter is built in and cannot be deleted' }, text: expect.any(String) });
    expect((await call('GET', '/api/templates/starter')).body).toMatchObject({ builtIn: true });
  });

  it('offers every kit route by id at /api/kits (make, list, preview, read, edit, copy, delete), and republishes a saved kit by id (admin, version + 1)', async () => {
    const made = await call('POST', '/api/kits', { json: { slug: 'desk-writer', label: 'Desk writer', source: { agent: 'writer' } } });
    expect(made.status).toBe(201);
    const id = made.body.id as string;
    expect(made.body).toMatchObject({ id: expect.stringMatching(/^kit-/), slug: 'desk-writer', version: 1, kind: 'agent' });
    expect((await call('POST', '/api/kits', { key: member, json: { slug: 'nope', label: 'Nope', source: { agent: 'writer' } } })).status).toBe(403);
    expect((await call('GET', '/api/kits')).body.map((k: any) => k.slug)).toContain('desk-writer');
    expect((await call('POST', '/api/kits/preview', { json: { agent: 'writer' } })).body).toMatchObject({ kind: 'agent', source: { agent: 'writer' } });
    expect((await call('PATCH', `/api/kits/${id}`, { json: { label: 'Desk writer kit' } })).body).toMatchObject({ id, label: 'Desk writer kit', version: 1 });

    // republish-saved: the saved kit, named by its id, gets a new snapshot of its source
    expect((await call('PUT', '/api/profiles/writer', { json: { name: 'writer', runtime: 'general', model: 'demo:echo', systemPrompt: 'Plain words.' } })).status).toBe(200);
    expect((await call('POST', `/api/kits/${id}/republish`, { key: member })).status).toBe(403);
    expect(await call('POST', `/api/kits/${id}/republish`, { key: globex })).toMatchObject({ status: 404, body: { error: `unknown kit: ${id}` } });
    const republished = await call('POST', `/api/kits/${id}/republish`);
    expect(republished.status).toBe(200);
    expect(republished.body).toMatchObject({ id, version: 2, label: 'Desk writer kit' });
    expect(republished.body.manifest.profiles[0]).toMatchObject({ name: 'writer', systemPrompt: 'Plain words.' });
    expect((await call('GET', `/api/kits/${id}`, { key: globex })).body).toMatchObject({ id, version: 2 });

    // another tenant plans and copies it by id
    const plan = await call('GET', `/api/kits/${id}/copy-plan?targetName=desk-writer`, { key: globex });
    expect(plan.body).toMatchObject({ kit: { id, slug: 'desk-writer', version: 2 }, targetName: 'desk-writer' });
    const copy = await call('POST', `/api/kits/${id}/copy`, { key: globex, json: { targetName: 'desk-writer' } });
    expect(copy.body).toMatchObject({ copied: true, kit: { id, version: 2 } });
    expect((await call('GET', '/api/profiles/desk-writer', { key: globex })).body).toMatchObject({ systemPrompt: 'Plain words.' });
    expect(await call('DELETE', `/api/kits/${id}`, { key: globex })).toMatchObject({ status: 404 });

    expect((await call('DELETE', `/api/kits/${id}`)).status).toBe(204);
    expect((await call('GET', `/api/kits/${id}`)).status).toBe(410);
    expect((await call('POST', `/api/kits/${id}/republish`)).status).toBe(404);
  });

  it('edits, republishes (version 2), disambiguates a shared slug with org=, and answers 410 once deleted', async () => {
    expect((await call('PATCH', '/api/templates/newsroom', { json: { label: 'The Newsroom' } })).body).toMatchObject({ label: 'The Newsroom', version: 1 });
    const republished = await call('POST', '/api/templates/newsroom/republish');
    expect(republished.status).toBe(200);
    expect(republished.body).toMatchObject({ id: kit.id, version: 2, label: 'The Newsroom' });
    expect((await call('GET', `/api/kits/${kit.id}`, { key: globex })).body.version).toBe(2);

    // globex saves its copy under the same slug: a third tenant must say which one it means
    expect((await call('POST', '/api/templates', { key: globex, json: { slug: 'newsroom', label: 'Ours', source: { agent: 'writer' } } })).status).toBe(201);
    const initech = await keyOf(svc, 'initech');
    const ambiguous = await call('GET', '/api/templates/newsroom', { key: initech });
    expect(ambiguous.status).toBe(409);
    expect(ambiguous.body.error).toMatch(/ambiguous.*org=/);
    expect((await call('GET', '/api/templates/newsroom?org=default', { key: initech })).body).toMatchObject({ id: kit.id });
    expect((await call('GET', `/api/templates/newsroom?id=${kit.id}`, { key: initech })).body).toMatchObject({ id: kit.id, version: 2 });
    expect((await call('GET', '/api/templates/newsroom', { key: globex })).body).toMatchObject({ authorHandle: 'globex' });

    expect((await call('DELETE', '/api/templates/newsroom', { key: member })).status).toBe(403);
    expect((await call('DELETE', '/api/templates/newsroom')).status).toBe(204);
    expect((await call('GET', `/api/public/kits/${kit.id}`, { key: null })).status).toBe(410);
    expect((await call('GET', '/api/templates/newsroom?org=default', { key: initech })).status).toBe(410);
    expect((await call('GET', '/api/templates', {})).body.map((k: any) => k.slug)).toEqual(['starter']);
  });

  it("does not let another tenant commit a tenant's staged skill import", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kit-skill-'));
    await writeFile(join(dir, 'SKILL.md'), '---\nname: private-skill\ndescription: Ours.\n---\nBody.\n');
    const dry = (await (await svc.api('/api/skills/import', { method: 'POST', body: await skillFolderForm(dir) })).json()) as { stagingId: string };
    expect(await call('POST', `/api/skills/import/${dry.stagingId}`, { key: globex })).toMatchObject({ status: 404 });
    expect((await call('GET', '/api/skills/private-skill', { key: globex })).status).toBe(404);
    expect((await call('POST', `/api/skills/import/${dry.stagingId}`)).status).toBe(201);
  });

  it('answers 424 and writes nothing when a kit skill cannot be installed', async () => {
    expect((await call('POST', '/api/templates', { json: { slug: 'solo', label: 'Solo', source: { agent: 'analyst' }, schedules: [] } })).status).toBe(201);
    await withSystem(svc.server.built.database!.db, (tx) =>
      sql`update kits set manifest = jsonb_set(manifest, '{skills,0,files,0,path}', '"../escape.sh"') where slug = 'solo'`.execute(tx),
    );
    const initech = await keyOf(svc, 'initech');
    const res = await call('POST', '/api/templates/solo/copy?org=default', { key: initech });
    expect(res.status).toBe(424);
    expect(res.body.error).toMatch(/^kit skill fact-check failed to install: \.\.\/escape\.sh/);
    expect((await call('GET', '/api/profiles', { key: initech })).body).toEqual([]);
    expect((await call('GET', '/api/skills/fact-check', { key: initech })).status).toBe(404);
    // a tenant created after boot gets the platform skills on its first catalog call, and nothing from the failed copy
    expect((await call('GET', '/api/skills', { key: initech })).body.map((s: any) => `${s.name}:${s.source}`)).toEqual(['skill-authoring:platform']);
  });
});
