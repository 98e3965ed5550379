import { createHash } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withOperator, withTenant } from '../../src/db/index.ts';
import { skillFolderForm } from '../../src/cli/client/skill-folder.ts';
import { loadPlatformSkills, PLATFORM_SKILLS_DIR, seedPlatformSkills } from '../../src/modules/conductor/skills/index.ts';
import { platformFingerprint } from '../../src/modules/conductor/skills/platform.ts';
import { insertKey } from '../../src/modules/conductor/identity/index.ts';
import { createLogger } from '../../src/shared/log.ts';
import { server } from '../support/backends.ts';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.ts';
import { readSse } from '../support/sse.ts';
import { startTestSvc, type TestSvc } from '../support/svc.ts';

/**
 * Skills that install like packages, through the real HTTP surface of one `all` instance on the PostgreSQL server:
 * a real folder on disk (scripts with their executable bit, a binary file, nested folders) is read by the CLI's folder
 * reader, dry-run, committed, and a run of a profile using the skill finds and executes its files in the sandbox.
 */
let svc: TestSvc;
let fake: FakeProvider;
let cleanup: () => Promise<void>;
let databaseUrl: string;
/** Replicas share their pepper, so one key opens both. */
const PEPPER = 'skills-import-pepper-0123456789';

beforeAll(async () => {
  fake = await startFakeProvider();
  const db = await server.setup();
  cleanup = db.cleanup;
  databaseUrl = db.url;
  svc = await startTestSvc({ DATABASE_URL: db.url, AGENT_API_KEY_PEPPER: PEPPER, OPENAI_COMPATIBLE_BASE_URL: fake.url, OPENAI_COMPATIBLE_API_KEY: 'x' }, 'all');
});
afterAll(async () => {
  for (const dir of folders) await rm(dir, { recursive: true, force: true });
  await svc?.stop();
  await fake?.close();
  await cleanup?.();
});

const json = async (res: Response) => ({ status: res.status, body: (await res.json()) as any });
const importForm = (form: FormData) => svc.api('/api/skills/import', { method: 'POST', body: form }).then(json);
const db = () => svc.server.built.database!.db;
const count = async (table: 'skills' | 'skill_imports' | 'skill_files') =>
  withTenant(db(), 'default', async (tx) => Number((await sql<{ n: string }>`select count(*) as n from ${sql.table(table)}`.execute(tx)).rows[0].n));
const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

const SKILL_MD = `---
name: report-kit
description: Builds the weekly report from the bundled scripts.
license: MIT
allowed-tools:
  - run_command
metadata:
  owner: finance
  tags: [weekly, report]
---
# Weekly report

Run scripts/build.sh, then read reference/deep/nested/format.md.
`;
const BINARY = new Uint8Array([0, 255, 1, 254, 0x80, 0x81, 10, 13, 0, 42]);

/** The folders skillFolder() made, removed after the file's tests. */
const folders: string[] = [];

async function skillFolder(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'skill-'));
  folders.push(dir);
  await mkdir(join(dir, 'scripts'));
  await mkdir(join(dir, 'assets'));
  await mkdir(join(dir, 'reference', 'deep', 'nested'), { recursive: true });
  await writeFile(join(dir, 'SKILL.md'), SKILL_MD);
  await writeFile(join(dir, 'scripts', 'build.sh'), '#!/bin/sh\necho "report built by $(basename "$0")"\n');
  await chmod(join(dir, 'scripts', 'build.sh'), 0o755);
  await writeFile(join(dir, 'scripts', 'helpers.py'), 'print("not executable")\n');
  await chmod(join(dir, 'scripts', 'helpers.py'), 0o644);
  await writeFile(join(dir, 'assets', 'logo.bin'), BINARY);
  await writeFile(join(dir, 'reference', 'deep', 'nested', 'format.md'), '# Format\n\nThree sections.\n');
  return dir;
}

describe('staged skill import', () => {
  it('dry-runs a real folder with every resource, commits it, and a run gets the files', async () => {
    const dir = await skillFolder();
    const dry = await importForm(await skillFolderForm(dir));
    expect(dry.status).toBe(200);
    const digest = async (rel: string) => sha256(await readFile(join(dir, rel)));
    expect(dry.body).toEqual({
      stagingId: expect.stringMatching(/^stg_/),
      expiresAt: expect.any(String),
      skill: { name: 'report-kit', description: 'Builds the weekly report from the bundled scripts.', license: 'MIT', compatibility: null, allowedTools: ['run_command'], metadata: { owner: 'finance', tags: ['weekly', 'report'] } },
      body: expect.stringContaining('# Weekly report'),
      resources: [
        { path: 'assets/logo.bin', contentType: 'application/octet-stream', sha256: await digest('assets/logo.bin'), executable: false, bytes: BINARY.byteLength },
        { path: 'reference/deep/nested/format.md', contentType: 'text/markdown', sha256: await digest('reference/deep/nested/format.md'), executable: false, bytes: 26 },
        { path: 'scripts/build.sh', contentType: 'text/x-shellscript', sha256: await digest('scripts/build.sh'), executable: true, bytes: expect.any(Number) },
        { path: 'scripts/helpers.py', contentType: 'text/x-python', sha256: await digest('scripts/helpers.py'), executable: false, bytes: 24 },
      ],
      requiresSandbox: true,
      totalBytes: expect.any(Number),
      validation: { ok: true, errors: [], warnings: [] },
    });
    expect(new Date(dry.body.expiresAt).getTime()).toBeGreaterThan(Date.now());
    // a dry run writes nothing to the catalog
    expect((await svc.api('/api/skills/report-kit')).status).toBe(404);

    const committed = await svc.api(`/api/skills/import/${dry.body.stagingId}`, { method: 'POST' }).then(json);
    expect(committed.status).toBe(201);
    expect(committed.body).toMatchObject({ name: 'report-kit', source: 'imported', license: 'MIT', requiresSandbox: true, totalBytes: dry.body.totalBytes });
    expect(committed.body.resources).toHaveLength(4);
    // a staging id is used once
    expect(await svc.api(`/api/skills/import/${dry.body.stagingId}`, { method: 'POST' }).then(json)).toEqual({ status: 404, body: { error: expect.stringMatching(/^unknown staging id: stg_/) } });

    const profile = { name: 'reporter', runtime: 'general', model: 'openai-compatible:fake-model', skills: ['report-kit'], tools: ['@default', '@exec'] };
    expect((await svc.api('/api/profiles', { method: 'POST', json: profile })).status).toBe(201);
    const script = 'cd .skills/report-kit && ./scripts/build.sh && test ! -x scripts/helpers.py && sha256sum assets/logo.bin && cat reference/deep/nested/format.md';
    const res = await svc.api('/api/runs', { method: 'POST', json: { profile: 'reporter', prompt: `CALL_TOOL run_command ${JSON.stringify({ command: 'sh', args: ['-c', script] })}` } });
    expect(res.status).toBe(202);
    const { runId } = (await res.json()) as { runId: string };
    const frames = await readSse(await svc.api(`/api/runs/${runId}/stream`));
    const last = frames.at(-1)!.event;
    expect(last.type).toBe('result');
    expect(last.message).toBe(`TOOL-RESULT-SEEN: report built by build.sh\n${sha256(BINARY)}  assets/logo.bin\n# Format\n\nThree sections.\n`);
    // the worker was told where the files are, and got no bytes
    const system = JSON.stringify(fake.requests.at(-1)!.body);
    expect(system).toContain('Resources (files in /work/.skills/report-kit)');
    expect(system).not.toContain(Buffer.from(BINARY).toString('base64'));
  });

  it('commits on another conductor than the one that took the dry run (staging lives in PostgreSQL)', async () => {
    const other = await startTestSvc({ DATABASE_URL: databaseUrl, AGENT_API_KEY_PEPPER: PEPPER }, 'conductor');
    try {
      const dir = await skillFolder();
      await writeFile(join(dir, 'SKILL.md'), SKILL_MD.replace('report-kit', 'replicated'));
      const dry = await importForm(await skillFolderForm(dir));
      expect(dry.status).toBe(200);
      const committed = await other.api(`/api/skills/import/${dry.body.stagingId}`, { method: 'POST' }).then(json);
      expect(committed).toMatchObject({ status: 201, body: { name: 'replicated', source: 'imported' } });
      expect((await svc.api('/api/skills/replicated').then(json)).body.resources).toHaveLength(4);
    } finally {
      await other.stop();
    }
  });

  it('expires a staging id', async () => {
    const dir = await skillFolder();
    await writeFile(join(dir, 'SKILL.md'), SKILL_MD.replace('report-kit', 'expiring'));
    const dry = await importForm(await skillFolderForm(dir));
    expect(dry.status).toBe(200);
    await withTenant(db(), 'default', (tx) => sql`update skill_imports set expires_at = now() - interval '1 second' where id = ${dry.body.stagingId}`.execute(tx));
    expect((await svc.api(`/api/skills/import/${dry.body.stagingId}`, { method: 'POST' })).status).toBe(404);
    expect((await svc.api('/api/skills/expiring')).status).toBe(404);
  });

  const form = (files: Array<[string, string | Uint8Array<ArrayBuffer>, string?]>) => {
    const f = new FormData();
    f.append('files', new File([SKILL_MD.replace('report-kit', 'refused')], 'SKILL.md'));
    for (const [name, content, type] of files) f.append('files', new File([content], name, type ? { type } : {}));
    return f;
  };

  it.each([
    ['path traversal', form([['../outside.sh', 'x']]), 'path_traversal'],
    ['an absolute name', form([['/etc/cron.d/evil', 'x']]), 'absolute_path'],
    ['a second SKILL.md', form([['nested/SKILL.md', '---\nname: two\ndescription: d\n---\n']]), 'second_skill_md'],
    ['an oversize file', form([['big.bin', new Uint8Array(4 * 1024 * 1024 + 1)]]), 'file_too_large'],
    ['a duplicate path', form([['a.md', 'one'], ['a.md', 'two']]), 'duplicate_path'],
  ])('refuses %s with 400, the dry run naming it, and writes nothing', async (_label, body, code) => {
    const before = { skills: await count('skills'), imports: await count('skill_imports'), files: await count('skill_files') };
    const res = await importForm(body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: expect.stringMatching(/^skill package refused: /), stagingId: null, validation: { ok: false, errors: [expect.objectContaining({ code })] } });
    expect({ skills: await count('skills'), imports: await count('skill_imports'), files: await count('skill_files') }).toEqual(before);
    expect((await svc.api('/api/skills/refused')).status).toBe(404);
  });

  it('refuses a folder holding a symbolic link, naming the link, and writes nothing', async () => {
    const dir = await skillFolder();
    await writeFile(join(dir, 'SKILL.md'), SKILL_MD.replace('report-kit', 'linked'));
    await symlink('/etc/passwd', join(dir, 'reference', 'passwd'));
    const before = await count('skill_imports');
    const res = await importForm(await skillFolderForm(dir));
    expect(res.status).toBe(400);
    expect(res.body.validation.errors).toEqual([{ code: 'link', path: 'reference/passwd', message: expect.stringContaining('symbolic links are not allowed') }]);
    expect(await count('skill_imports')).toBe(before);
    expect((await svc.api('/api/skills/linked')).status).toBe(404);
  });

  it('refuses a body that is not multipart, and a name already in the catalog', async () => {
    expect(await svc.api('/api/skills/import', { method: 'POST', json: { name: 'x' } }).then(json)).toEqual({ status: 400, body: { error: expect.stringMatching(/^body: expected multipart\/form-data/) } });
    const taken = await importForm(await skillFolderForm(await skillFolder()));
    expect(taken.status).toBe(400);
    expect(taken.body.validation.errors).toEqual([expect.objectContaining({ code: 'name_taken' })]);
  });
});

describe('platform skills', () => {
  it('are seeded at boot; deleting one leaves a tombstone so reseeding does not bring it back', async () => {
    const listed = (await svc.api('/api/skills').then(json)).body as Array<{ name: string; source: string }>;
    expect(listed).toContainEqual(expect.objectContaining({ name: 'skill-authoring', source: 'platform' }));
    const one = (await svc.api('/api/skills/skill-authoring').then(json)).body;
    expect(one.resources).toEqual([expect.objectContaining({ path: 'reference/checklist.md', executable: false })]);

    const platform = await loadPlatformSkills(PLATFORM_SKILLS_DIR, createLogger('test'));
    expect(await seedPlatformSkills(db(), platform, ['default'])).toBe(0);
    expect((await svc.api('/api/skills/skill-authoring', { method: 'DELETE' })).status).toBe(204);
    expect(await seedPlatformSkills(db(), platform, ['default'])).toBe(0);
    expect((await svc.api('/api/skills/skill-authoring')).status).toBe(404);
  });

  it('are recorded per tenant: a restart seeds only tenants without them; a tenant created since gets them on its first /api/skills call', async () => {
    const fingerprint = await platformFingerprint(PLATFORM_SKILLS_DIR);
    const seededWith = (id: string) => withOperator(db(), async (tx) => (await tx.selectFrom('tenants').select('platform_skills').where('id', '=', id).executeTakeFirstOrThrow()).platform_skills);
    expect(await seededWith('default')).toBe(fingerprint);

    await withOperator(db(), (tx) => tx.insertInto('tenants').values({ id: 'skills-later', name: 'Later' }).execute());
    expect(await seededWith('skills-later')).toBeNull();
    const { token } = await insertKey({ db: db(), pepper: PEPPER, keyEnv: 'test' }, 'skills-later', { name: 'owner', role: 'owner', createdBy: null, expiresAt: null });
    const listed = (await svc.api('/api/skills', { key: token }).then(json)).body as Array<{ name: string; source: string }>;
    expect(listed).toContainEqual(expect.objectContaining({ name: 'skill-authoring', source: 'platform' }));
    expect(await seededWith('skills-later')).toBe(fingerprint);

    // a replica that boots later with the same skills finds every tenant seeded: it writes nothing, and a platform skill
    // a tenant removed behind the catalog's back (no tombstone) stays removed until the shipped skills change
    await withTenant(db(), 'skills-later', (tx) => sql`delete from skills where name = 'skill-authoring'`.execute(tx));
    const replica = await startTestSvc({ DATABASE_URL: databaseUrl, AGENT_API_KEY_PEPPER: PEPPER }, 'conductor');
    try {
      expect((await replica.api('/api/skills', { key: token }).then(json)).body).not.toContainEqual(expect.objectContaining({ name: 'skill-authoring' }));
    } finally {
      await replica.stop();
    }
    // a tenant whose fingerprint is stale (older shipped skills) is seeded again at the next boot
    await withOperator(db(), (tx) => tx.updateTable('tenants').set({ platform_skills: 'older' }).where('id', '=', 'skills-later').execute());
    const next = await startTestSvc({ DATABASE_URL: databaseUrl, AGENT_API_KEY_PEPPER: PEPPER }, 'conductor');
    try {
      expect(await seededWith('skills-later')).toBe(fingerprint);
      expect((await next.api('/api/skills', { key: token }).then(json)).body).toContainEqual(expect.objectContaining({ name: 'skill-authoring', source: 'platform' }));
    } finally {
      await next.stop();
    }
  });
});
