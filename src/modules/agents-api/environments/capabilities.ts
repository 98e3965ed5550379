import type { RunnerClient } from '../../../contracts/runner.client.ts';
import type { SkillPayload } from '../../../contracts/worker.ts';
import { withTenant } from '../../../db/index.ts';
import { AppError, describeError } from '../../../shared/errors.ts';
import { inspectSkill, unzip, type SkillFile } from '../skills/skill-archive.ts';
import { decodeBase64, isInside } from '../validation.ts';
import { skillVersionArchive } from './environments.repo.ts';
import type { EnvironmentSpec } from './environments.service.ts';
import { PLATFORM, SANDBOX_DIR, type SandboxDeps } from './sandbox.ts';

/**
 * An environment's `skills`, `plugins` and `capability_directories`, installed into each run of its session the way a
 * /api profile's skills are (conductor/skills/resolve.ts): as the run's skills, which the runner writes under
 * `/work/.skills/<name>/` before the worker starts (runner/runs/skill-files.ts) and the worker lists in the model's
 * instructions under "## Skills" with their SKILL.md body and files (worker/runtimes/prompt.ts).
 * - a `skill_reference` is the version of a `/v1/skills` skill the environment resolved at creation; an `inline`
 *   skill is its zip. Either's SKILL.md (front matter aside) is the body, its other files the resources.
 * - a plugin is installed whole under `/work/.skills/<plugin>/`, described by its name and description; each SKILL.md
 *   inside it is a skill of its own that points into that folder.
 * - each capability directory (`/workspace/...` is the sandbox's `/work/...`; `/home/...` as is) is looked through at
 *   the start of every turn, so skills that files or setup commands put there count: every SKILL.md below it is a
 *   skill whose files stay where they are.
 * What cannot be installed (a skill version deleted since, an unreadable SKILL.md, a directory outside the sandbox) is
 * left out and named in `skipped`, so the turn can say so.
 */
export interface InstalledCapabilities {
  skills: SkillPayload[];
  skipped: string[];
}

/** What one run may carry in skill files, as for a /api profile's skills (conductor MAX_RUN_SKILL_BYTES). */
const MAX_RUN_SKILL_BYTES = 64 * 1024 * 1024;
const SKILLS_DIR = `${SANDBOX_DIR}/.skills`;
const MAX_LISTED = 5000;
/** Folder names the runner accepts for a skill (runner/runs/skill-files.ts SKILL_NAME). */
const FOLDER_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

export async function environmentCapabilities(
  deps: SandboxDeps,
  client: RunnerClient,
  tenantId: string,
  sessionId: string,
  env: { spec: EnvironmentSpec; workspaceDirectory: string },
): Promise<InstalledCapabilities> {
  const out: InstalledCapabilities = { skills: [], skipped: [] };
  const names = new Set<string>();
  const folder = (wanted: string) => uniqueFolder(wanted, names);
  const { spec } = env;
  for (const s of spec.skills) {
    try {
      if (s.type === 'skill_reference') {
        const archive = await withTenant(deps.resources.db, tenantId, (tx) => skillVersionArchive(tx, s.skill_id, Number(s.version)));
        if (!archive) throw new Error(`version ${s.version} of skill ${s.skill_id} no longer exists`);
        out.skills.push(await packagedSkill(await unzip(archive), folder(s.name), s.description));
      } else {
        const source = spec.sources.skills.find((x) => x.name === s.name);
        if (!source) throw new Error('its zip was not kept');
        out.skills.push(await packagedSkill(await unzip(decodeBase64(source.data)), folder(s.name), s.description));
      }
    } catch (err) {
      out.skipped.push(`skill ${s.name}: ${reason(err)}`);
    }
  }
  for (const p of spec.plugins) {
    try {
      const source = spec.sources.plugins.find((x) => x.name === p.name);
      if (!source) throw new Error('its zip was not kept');
      out.skills.push(...(await plugin(await unzip(decodeBase64(source.data)), folder(p.name), p.description, folder)));
    } catch (err) {
      out.skipped.push(`plugin ${p.name}: ${reason(err)}`);
    }
  }
  const carried = out.skills.flatMap((s) => s.resources ?? []).reduce((n, r) => n + (r.content?.length ?? 0), 0);
  if (carried > (MAX_RUN_SKILL_BYTES * 4) / 3) throw new AppError(400, `the environment's skills and plugins hold more than the ${MAX_RUN_SKILL_BYTES} bytes a run carries`);
  for (const dir of spec.capability_directories) {
    const where = sandboxDir(dir, env.workspaceDirectory);
    if (!where) {
      out.skipped.push(`capability directory ${dir}: outside the sandbox (use a path in ${env.workspaceDirectory} or /home)`);
      continue;
    }
    try {
      out.skills.push(...(await directorySkills(client, tenantId, sessionId, where, folder)));
    } catch (err) {
      out.skipped.push(`capability directory ${dir}: ${reason(err)}`);
    }
  }
  return out;
}

const reason = (err: unknown) => describeError(err).replace(/^files: /, '');

/** A folder name for a skill: its name when the runner can use it as one, else a tidied form; never one already taken. */
function uniqueFolder(wanted: string, taken: Set<string>): string {
  let base = FOLDER_NAME.test(wanted) ? wanted : wanted.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[^A-Za-z0-9]+/, '').slice(0, 120);
  if (!base) base = 'skill';
  let name = base;
  for (let n = 2; taken.has(name); n++) name = `${base}-${n}`;
  taken.add(name);
  return name;
}

/** The SKILL.md text without its front matter. */
export function skillBody(text: string): string {
  const front = /^\uFEFF?---[ \t]*\r?\n[\s\S]*?\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|$)/.exec(text);
  return (front ? text.slice(front[0].length) : text).trim();
}

const utf8 = (bytes: Uint8Array) => new TextDecoder('utf-8', { fatal: true }).decode(bytes);

/** A skill from its files: SKILL.md at the root (or in the one folder every path shares) is the body, the rest resources. */
async function packagedSkill(files: SkillFile[], name: string, description: string): Promise<SkillPayload> {
  await inspectSkill(files); // the same rules as an upload: one SKILL.md at the root, with a name and description
  const skillMd = files.find((f) => f.path === 'SKILL.md') ?? files.find((f) => f.path.endsWith('/SKILL.md'))!;
  const root = skillMd.path.slice(0, -'SKILL.md'.length);
  const resources = files
    .filter((f) => f !== skillMd && f.path.startsWith(root))
    .map((f) => ({ path: f.path.slice(root.length), size: f.content.byteLength, content: Buffer.from(f.content).toString('base64') }));
  return { name, description, body: skillBody(utf8(skillMd.content)), resources };
}

/** A plugin: its whole zip under its folder, plus a skill for each SKILL.md in it (its files stay in the plugin's folder). */
async function plugin(files: SkillFile[], name: string, description: string, folder: (wanted: string) => string): Promise<SkillPayload[]> {
  const inner: SkillPayload[] = [];
  for (const md of files.filter((f) => f.path === 'SKILL.md' || f.path.endsWith('/SKILL.md'))) {
    const root = md.path.slice(0, -'SKILL.md'.length);
    const manifest = await inspectSkill([{ path: 'SKILL.md', content: md.content }]);
    const resources = files.filter((f) => f !== md && f.path.startsWith(root)).map((f) => ({ path: f.path.slice(root.length), size: f.content.byteLength }));
    inner.push({ name: folder(manifest.name), description: manifest.description, body: skillBody(utf8(md.content)), resources, dir: `${SKILLS_DIR}/${name}${root ? `/${root.slice(0, -1)}` : ''}` });
  }
  const brings = inner.length ? `\n\nSkills it brings (each listed below): ${inner.map((s) => s.name).join(', ')}.` : '';
  const own: SkillPayload = {
    name,
    description,
    body: `The ${name} plugin: ${description}${brings}`,
    resources: files.map((f) => ({ path: f.path, size: f.content.byteLength, content: Buffer.from(f.content).toString('base64') })),
  };
  return [own, ...inner];
}

/** `/workspace/x` → `/work/x`; `/home/...` as is; anything else is not in the sandbox. */
function sandboxDir(dir: string, workspace: string): string | undefined {
  if (dir === workspace) return SANDBOX_DIR;
  if (isInside(dir, workspace)) return `${SANDBOX_DIR}/${dir.slice(workspace.length + 1)}`;
  if (dir === '/home' || isInside(dir, '/home')) return dir;
  return undefined;
}

/** Every SKILL.md below `dir` in the sandbox, as a skill whose files stay where they are. */
async function directorySkills(client: RunnerClient, tenantId: string, sessionId: string, dir: string, folder: (wanted: string) => string): Promise<SkillPayload[]> {
  const listed = await client.invokeTool(tenantId, sessionId, 'fs_list', { path: dir, recursive: true, max_entries: MAX_LISTED }, PLATFORM);
  if (!listed.ok) {
    const error = String((listed.value as { error?: unknown } | null)?.error ?? 'cannot be listed');
    if (error.endsWith('no such file or directory')) return []; // not there (yet): nothing to install
    throw new Error(error);
  }
  const entries = (listed.value as { entries: Array<{ path: string; type: string; size?: number }> }).entries.filter((e) => e.type === 'file');
  const out: SkillPayload[] = [];
  for (const md of entries.filter((e) => e.path.endsWith('/SKILL.md'))) {
    const root = md.path.slice(0, -'SKILL.md'.length);
    const read = await client.invokeTool(tenantId, sessionId, 'fs_read', { path: md.path }, PLATFORM);
    if (!read.ok) throw new Error(`${md.path}: ${String((read.value as { error?: unknown } | null)?.error)}`);
    const text = (read.value as { content: string }).content;
    let manifest: { name: string; description: string };
    try {
      manifest = await inspectSkill([{ path: 'SKILL.md', content: new TextEncoder().encode(text) }]);
    } catch (err) {
      throw new Error(`${md.path}: ${reason(err)}`);
    }
    const resources = entries.filter((e) => e !== md && e.path.startsWith(root)).map((e) => ({ path: e.path.slice(root.length), ...(e.size !== undefined ? { size: e.size } : {}) }));
    out.push({ name: folder(manifest.name), description: manifest.description, body: skillBody(text), resources, dir: root.slice(0, -1) });
  }
  return out;
}
