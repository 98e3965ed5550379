import { constants } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { SkillPayload } from '../../../contracts/worker.ts';
import { openRegular } from '../vfs/fs-ops.ts';
import { VfsError, type VfsView } from '../vfs/index.ts';

/**
 * Packaged skills reach a run as files: before the worker starts, each resource that came with its bytes is written
 * to `/work/.skills/<skill>/<path>` in the session (mode 0755 when executable, else 0644), through the session's
 * VirtualFS view, so every path and link check of the file tools applies. The skill's folder is emptied first: it
 * holds the skill as it is now, not files of an older version (or left there by a command). The worker then gets the skill without the
 * bytes and with `dir`, which its prompt names.
 */
export const SKILLS_DIR = '/work/.skills';
const SKILL_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

export const carriesFiles = (skills: readonly SkillPayload[] | undefined): boolean => !!skills?.some((s) => s.resources?.some((r) => r.content !== undefined));

export async function writeSkillFiles(view: VfsView, skills: readonly SkillPayload[]): Promise<void> {
  for (const skill of skills) {
    const files = skill.resources?.filter((r) => r.content !== undefined) ?? [];
    if (files.length === 0) continue;
    if (!SKILL_NAME.test(skill.name)) throw new VfsError(`skill name ${JSON.stringify(skill.name)} cannot be a folder name`);
    const folder = await view.resolve(`${SKILLS_DIR}/${skill.name}`, 'write');
    if (folder.host) await rm(folder.host, { recursive: true, force: true });
    for (const r of files) {
      const { path, host } = await view.resolve(`${SKILLS_DIR}/${skill.name}/${r.path}`, 'write');
      if (!host || path.rest.length < 3) throw new VfsError(`${path.virtual}: not a file path`);
      await mkdir(dirname(host), { recursive: true, mode: 0o700 });
      const bytes = Buffer.from(r.content!, 'base64');
      const { fh } = await openRegular(host, path.virtual, constants.O_RDWR | constants.O_CREAT);
      try {
        await fh.truncate(0);
        await fh.write(bytes, 0, bytes.byteLength, 0);
        await fh.chmod(r.executable ? 0o755 : 0o644);
      } finally {
        await fh.close();
      }
    }
  }
}

/** What the worker gets: no bytes; `dir` where the files are when there were any. */
export function forWorker(skills: readonly SkillPayload[]): SkillPayload[] {
  return skills.map((s) => {
    if (!s.resources?.some((r) => r.content !== undefined)) return s;
    return { ...s, dir: `${SKILLS_DIR}/${s.name}`, resources: s.resources.map(({ content: _content, ...r }) => r) };
  });
}
