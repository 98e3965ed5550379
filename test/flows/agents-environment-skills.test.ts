import { strToU8, zipSync } from 'fflate';
import { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect, FAKE_MODEL, startAgentsHarness, textOf, type AgentsHarness } from '../support/agents.ts';
import { modelRequests } from '../support/fake-provider.ts';

/**
 * A hosted environment's `skills`, `plugins` and `capability_directories` reach the session the way a /api profile's
 * skills do: listed in the model's instructions (name, description, SKILL.md body, files) and their files in the
 * sandbox under `/work/.skills/`. A skill uploaded through `/v1/skills` reaches a session by reference. Driven by the
 * `openai` 7.15.0 package; what the model was told is read from the fake provider's logged requests.
 */
describe('skills, plugins and capability directories of a hosted environment', () => {
  let h: AgentsHarness;
  beforeAll(async () => {
    h = await startAgentsHarness();
  });
  afterAll(() => h?.stop());

  const md = (name: string, description: string, body: string) => `---\nname: ${name}\ndescription: ${description}\n---\n${body}\n`;
  const zipB64 = (files: Record<string, string>) => Buffer.from(zipSync(Object.fromEntries(Object.entries(files).map(([p, t]) => [p, strToU8(t)])))).toString('base64');
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const source = (files: Record<string, string>) => ({ type: 'base64' as const, media_type: 'application/zip' as const, data: zipB64(files) });
  const sessions = () => h.client.beta.agents.sessions;
  /** A turn, and the instructions (system text) its first model request carried. */
  const turn = async (sessionId: string, input: string) => {
    const before = modelRequests(h.fake).length;
    const events = await collect(sessions().stream(sessionId, { input }));
    expect(events.at(-2)!.type).toBe('agent.session.turn.completed');
    const request = modelRequests(h.fake)[before];
    const system = (request.body.messages as Array<{ role: string; content: unknown }>).filter((m) => m.role === 'system').map((m) => JSON.stringify(m.content)).join('\n');
    return { events, text: textOf(events), system };
  };

  it('lists each in the instructions and puts their files in the sandbox, never as artifacts', async () => {
    const uploaded = await h.client.skills.create({
      files: [
        await toFile(strToU8(md('pdf-helper', 'Fills PDF forms', 'Run scripts/fill.sh first. UPLOADED-SKILL-BODY')), 'pdf-helper/SKILL.md'),
        await toFile(strToU8('echo filled\n'), 'pdf-helper/scripts/fill.sh'),
      ],
    });
    const agent = await h.client.beta.agents.create({ model: FAKE_MODEL, instructions: 'Be brief.' });
    const session = await sessions().create({
      agent_id: agent.id,
      environment: {
        type: 'openai_hosted',
        skills: [
          { type: 'skill_reference', skill_id: uploaded.id },
          { type: 'inline', name: 'house-style', description: 'How we write', source: source({ 'SKILL.md': md('house-style', 'How we write', 'INLINE-SKILL-BODY'), 'examples.md': 'short sentences' }) },
        ],
        plugins: [
          {
            type: 'inline',
            name: 'linting',
            description: 'Lint rules for the repository',
            source: source({ 'README.md': 'the linting plugin', 'skills/lint/SKILL.md': md('lint', 'Checks style', 'PLUGIN-SKILL-BODY'), 'skills/lint/rules.txt': 'no tabs' }),
          },
        ],
        capability_directories: ['/workspace/.agents'],
        files: [{ type: 'inline', path: '/workspace/.agents/review/SKILL.md', data: b64(md('review', 'Reviews changes', 'CAPABILITY-DIR-BODY')) }],
      },
    });

    const first = await turn(session.id, 'CALL_TOOL fs_read {"path":".skills/pdf-helper/scripts/fill.sh"}');
    // the uploaded skill's file is in the sandbox where its listing says
    expect(first.text).toBe('TOOL-RESULT-SEEN: echo filled\n');
    expect(first.system).toContain('Be brief.');
    for (const expected of [
      '### pdf-helper',
      'Fills PDF forms',
      'UPLOADED-SKILL-BODY',
      'Resources (files in /work/.skills/pdf-helper)',
      'scripts/fill.sh',
      '### house-style',
      'INLINE-SKILL-BODY',
      'examples.md',
      '### linting',
      'Lint rules for the repository',
      '### lint',
      'PLUGIN-SKILL-BODY',
      'Resources (files in /work/.skills/linting/skills/lint)',
      'rules.txt',
      '### review',
      'CAPABILITY-DIR-BODY',
      'Its folder: /work/.agents/review',
    ]) {
      expect(first.system).toContain(expected);
    }
    expect(first.system).not.toContain('name: pdf-helper'); // the front matter is not the body
    expect((await turn(session.id, 'CALL_TOOL fs_read {"path":".skills/linting/skills/lint/rules.txt"}')).text).toBe('TOOL-RESULT-SEEN: no tabs');
    // installed files are not the session's work
    expect((await sessions().artifacts.list(session.id)).data).toEqual([]);

    // a skill that appears in a capability directory (here: a file added to the environment) counts from the next turn
    const environmentId = (session.environment as { id: string }).id;
    await h.client.beta.agents.environments.files.create(environmentId, { type: 'inline', path: '/workspace/.agents/deploy/SKILL.md', data: b64(md('deploy', 'Ships it', 'ADDED-LATER-BODY')) });
    expect((await turn(session.id, 'hello')).system).toContain('ADDED-LATER-BODY');
  });

  it('names what it cannot install in an item, and the turn goes on', async () => {
    const uploaded = await h.client.skills.create({ files: [await toFile(strToU8(md('short-lived', 'Goes away', 'GONE-BODY')), 'short-lived/SKILL.md')] });
    const second = await h.client.skills.versions.create(uploaded.id, { files: [await toFile(strToU8(md('short-lived', 'Goes away', 'V2-BODY')), 'short-lived/SKILL.md')] });
    const agent = await h.client.beta.agents.create({ model: FAKE_MODEL });
    const session = await sessions().create({
      agent_id: agent.id,
      environment: { type: 'openai_hosted', skills: [{ type: 'skill_reference', skill_id: uploaded.id, version: second.version }], capability_directories: ['/etc/skills'] },
    });
    await h.client.skills.update(uploaded.id, { default_version: '1' });
    await h.client.skills.versions.delete(second.version, { skill_id: uploaded.id });
    const { events, system } = await turn(session.id, 'hello');
    expect(system).not.toContain('V2-BODY');
    const note = events.find((e) => e.type === 'agent.session.turn.item.done' && (e as { item: { command?: string } }).item.command === 'install skills') as { item: { output: string; status: string } } | undefined;
    expect(note?.item.status).toBe('incomplete');
    expect(note?.item.output).toContain(`skill short-lived: version 2 of skill ${uploaded.id} no longer exists`);
    expect(note?.item.output).toContain('capability directory /etc/skills: outside the sandbox');
    expect(textOf(events)).toBe('FAKE-REPLY: hello');
  });
});
