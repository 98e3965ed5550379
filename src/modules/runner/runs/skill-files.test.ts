import { lstat, mkdtemp, readFile, symlink, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createVfsManager } from '../vfs/index.ts';
import { forWorker, writeSkillFiles } from './skill-files.ts';

const b64 = (s: string | Uint8Array) => Buffer.from(s).toString('base64');

async function sessionView() {
  const dataDir = await mkdtemp(join(tmpdir(), 'skill-files-'));
  const vfs = createVfsManager({ dataDir });
  const session = { id: 'sess-1', tenant: 'acme', profile: { name: 'p', runtime: 'general' as const } };
  vfs.allocate(session);
  const view = vfs.view(session, []);
  return { view, work: await view.workDir(), dataDir };
}

describe('skill files in a session', () => {
  it('writes each packaged resource under /work/.skills/<skill> with its executable bit, and tells the worker where', async () => {
    const { view, work } = await sessionView();
    const skills = [{ name: 'kit', body: 'b', resources: [
      { path: 'scripts/run.sh', content: b64('#!/bin/sh\necho hi\n'), executable: true },
      { path: 'a/b/c.bin', content: b64(new Uint8Array([0, 255, 7])), executable: false },
      { path: 'listed-only.md', size: 3 },
    ] }];
    await writeSkillFiles(view, skills);
    expect((await lstat(join(work, '.skills/kit/scripts/run.sh'))).mode & 0o777).toBe(0o755);
    expect((await lstat(join(work, '.skills/kit/a/b/c.bin'))).mode & 0o777).toBe(0o644);
    expect(new Uint8Array(await readFile(join(work, '.skills/kit/a/b/c.bin')))).toEqual(new Uint8Array([0, 255, 7]));
    await expect(lstat(join(work, '.skills/kit/listed-only.md'))).rejects.toThrow(/ENOENT/);
    expect(forWorker(skills)).toEqual([{ name: 'kit', body: 'b', dir: '/work/.skills/kit', resources: [
      { path: 'scripts/run.sh', executable: true },
      { path: 'a/b/c.bin', executable: false },
      { path: 'listed-only.md', size: 3 },
    ] }]);
  });

  it('empties the skill folder first, so files of an older version do not linger', async () => {
    const { view, work } = await sessionView();
    await writeSkillFiles(view, [{ name: 'kit', body: 'b', resources: [{ path: 'old.txt', content: b64('old') }] }]);
    await writeSkillFiles(view, [{ name: 'kit', body: 'b', resources: [{ path: 'new.txt', content: b64('new') }] }]);
    await expect(lstat(join(work, '.skills/kit/old.txt'))).rejects.toThrow(/ENOENT/);
    expect(await readFile(join(work, '.skills/kit/new.txt'), 'utf8')).toBe('new');
  });

  it('refuses to follow a link an earlier command left in place of the skills folder', async () => {
    const { view, work, dataDir } = await sessionView();
    const outside = join(dataDir, 'outside');
    await mkdir(outside);
    await symlink(outside, join(work, '.skills'));
    await expect(writeSkillFiles(view, [{ name: 'kit', body: 'b', resources: [{ path: 'x.txt', content: b64('x') }] }])).rejects.toThrow(/link/);
    await expect(lstat(join(outside, 'kit/x.txt'))).rejects.toThrow(/ENOENT/);
  });

  it('refuses a path that climbs out of the skill folder', async () => {
    const { view } = await sessionView();
    await expect(writeSkillFiles(view, [{ name: 'kit', body: 'b', resources: [{ path: '../../etc/x', content: b64('x') }] }])).rejects.toThrow();
  });
});
