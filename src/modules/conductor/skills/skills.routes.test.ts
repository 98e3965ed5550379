import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApi, type TestApi } from '../toolkit/api.fixture.ts';
import { resolveSkills, skillRoutes } from './index.ts';

let api: TestApi;
beforeAll(async () => {
  api = await testApi((app, database) => app.route('/api/skills', skillRoutes({ db: database.db })));
});
afterAll(() => api.close());

const sha = 'a'.repeat(64);
const skill = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  description: `How to ${name}`,
  body: `# ${name}\n\nSteps.`,
  resources: [{ path: 'scripts/run.sh', contentType: 'text/x-shellscript', sha256: sha, size: 120 }],
  ...extra,
});

describe('skill catalog', () => {
  it('creates a skill, lists it without its body and reads it back whole', async () => {
    const created = await api.request('POST', '/api/skills', { json: skill('pdf-forms') });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'pdf-forms', source: 'user', body: '# pdf-forms\n\nSteps.', resources: [{ path: 'scripts/run.sh', sha256: sha, size: 120 }] });
    const list = await api.request('GET', '/api/skills');
    expect(list.body).toEqual([expect.objectContaining({ name: 'pdf-forms', description: 'How to pdf-forms' })]);
    expect(list.body[0].body).toBeUndefined();
    expect((await api.request('GET', '/api/skills/pdf-forms')).body.body).toBe('# pdf-forms\n\nSteps.');
  });

  it('refuses a taken name with 409 and an unknown one with 404', async () => {
    await api.request('POST', '/api/skills', { json: skill('dup') });
    expect(await api.request('POST', '/api/skills', { json: skill('dup') })).toEqual({ status: 409, body: { error: 'skill dup already exists' } });
    expect(await api.request('GET', '/api/skills/ghost')).toEqual({ status: 404, body: { error: 'unknown skill: ghost' } });
  });

  it.each([
    ['a resource path that climbs out', { resources: [{ path: '../etc/passwd', sha256: sha, size: 1 }] }, /^resources\.0\.path: /],
    ['a bad digest', { resources: [{ path: 'a.md', sha256: 'xyz', size: 1 }] }, /^resources\.0\.sha256: /],
    ['a missing body', { body: undefined }, /^body: /],
    ['a name with a slash', { name: 'a/b' }, /^name: /],
    ['a name that climbs', { name: '../../etc' }, /^name: a name of 1-128 letters.*; received "..\/..\/etc"$/],
    ['a name holding ".."', { name: 'a..b' }, /^name: .*without "\.\."/],
  ])('refuses %s with 400 naming the field', async (_label, over, error) => {
    const res = await api.request('POST', '/api/skills', { json: skill('bad', over) });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(error);
  });

  it('keeps each tenant\'s catalog to itself', async () => {
    await api.request('POST', '/api/skills', { json: skill('secret-sauce') });
    expect((await api.request('GET', '/api/skills/secret-sauce', { as: { tenantId: 'globex' } })).status).toBe(404);
    expect((await api.request('GET', '/api/skills', { as: { tenantId: 'globex' } })).body).toEqual([]);
  });

  it('resolves a profile\'s skill names into worker payloads in the profile\'s order', async () => {
    await api.request('POST', '/api/skills', { json: skill('first') });
    await api.request('POST', '/api/skills', { json: skill('second', { resources: [] }) });
    const payloads = await resolveSkills(api.database.db, 'acme', ['second', 'first']);
    expect(payloads.map((p) => p.name)).toEqual(['second', 'first']);
    expect(payloads[1]).toEqual({ name: 'first', description: 'How to first', body: '# first\n\nSteps.', resources: [{ path: 'scripts/run.sh', contentType: 'text/x-shellscript', sha256: sha, size: 120 }] });
    await expect(resolveSkills(api.database.db, 'acme', ['first', 'gone'])).rejects.toThrow('unknown skill: gone');
    await expect(resolveSkills(api.database.db, 'globex', ['first'])).rejects.toThrow('unknown skill: first');
  });
});
