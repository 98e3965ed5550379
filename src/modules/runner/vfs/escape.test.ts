import { linkSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { invokeTool, makeRunner, newSession, putProfile } from '../runner.fixture.ts';
import type { Runner } from '../runner.ts';

/**
 * Path-escape attempts through every file tool: each must be refused, the canary file outside the session's mounts
 * must keep its content and mtime, and no file may appear outside the runner's data dir. Links are planted directly
 * on the host, as a `run_command` could.
 */
const SECRET = 'CANARY-SECRET-4242';
const base = join(tmpdir(), `svc-escape-${randomUUID()}`);
const canary = join(base, 'canary.txt');
const outsideDir = join(base, 'outside');
const dataDir = join(base, 'data');
let runner: Runner;
let sessionId: string;
let workDir: string;

/** Every file outside the data dir, with its content and mtime. */
function outsideSnapshot(): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (p === dataDir) continue;
      if (e.isDirectory()) walk(p);
      else out[p] = `${readFileSync(p, 'utf8')}@${statSync(p).mtimeMs}`;
    }
  };
  walk(base);
  return out;
}

let before: Record<string, string>;

beforeAll(async () => {
  mkdirSync(outsideDir, { recursive: true });
  writeFileSync(canary, `${SECRET}\n`);
  writeFileSync(join(outsideDir, 'canary.txt'), `${SECRET}\n`);
  runner = makeRunner({ config: { dataDir } });
  await putProfile(runner, { name: 'helper', tools: ['@files'] });
  sessionId = await newSession(runner, 'helper');
  await invokeTool(runner, sessionId, 'fs_write', { path: 'seed.txt', content: 'inside' });
  workDir = join(dataDir, 'sessions', sessionId, 'work');
  symlinkSync(canary, join(workDir, 'link-file'));
  symlinkSync(outsideDir, join(workDir, 'link-dir'));
  linkSync(canary, join(workDir, 'hard'));
  before = outsideSnapshot();
});
afterAll(async () => {
  await runner.close();
  rmSync(base, { recursive: true, force: true });
});

const ESCAPES: Array<[string, string]> = [
  ['a relative parent climb', '../../../canary.txt'],
  ['a parent climb from the mount', '/work/../../../../canary.txt'],
  ['a climb hidden after a real segment', '/work/a/../../../canary.txt'],
  ['a climb through another mount', '/pool/../canary.txt'],
  ['the absolute host path of the canary', canary],
  ['a system file', '/etc/passwd'],
  ['percent-encoded dots', '/work/%2e%2e/%2e%2e/%2e%2e/canary.txt'],
  ['percent-encoded dots and slashes', '%2e%2e%2f%2e%2e%2fcanary.txt'],
  ['double percent-encoding', '/work/%252e%252e/canary.txt'],
  ['overlong UTF-8 dots', '/work/%c0%ae%c0%ae/canary.txt'],
  ['backslash separators', '..\\..\\..\\canary.txt'],
  ['mixed separators', '/work\\..\\..\\canary.txt'],
  ['a Windows drive letter', 'C:/canary.txt'],
  ['a home shortcut', '~/canary.txt'],
  ['another user\'s home', '~root/.bashrc'],
  ['a NUL byte', '/work/x\u0000/../../canary.txt'],
  ['a network path', '//localhost/canary.txt'],
  ['fullwidth dots', '/work/\uff0e\uff0e/\uff0e\uff0e/\uff0e\uff0e/canary.txt'],
  ['a look-alike mount', '/workspace/canary.txt'],
  ['a symlink to the canary', '/work/link-file'],
  ['a symlinked directory leading outside', '/work/link-dir/canary.txt'],
  ['a hard link to the canary', '/work/hard'],
];

const attempts = (path: string) =>
  [
    ['fs_read', { path }],
    ['fs_write', { path, content: 'pwned' }],
    ['fs_edit', { path, old_string: 'CANARY', new_string: 'pwned' }],
    ['fs_list', { path }],
    ['fs_search', { pattern: 'CANARY', path }],
  ] as const;

describe('path escapes through the file tools', () => {
  it.each(ESCAPES)('refuses %s', async (_label, path) => {
    for (const [tool, input] of attempts(path)) {
      const { status, body } = await invokeTool(runner, sessionId, tool, input);
      expect(JSON.stringify(body), tool).not.toContain(SECRET);
      if (status === 400) {
        // the HTTP surface refuses NUL in any JSON string before a tool sees it
        expect(body.error, tool).toMatch(/NUL/);
        continue;
      }
      expect(status, tool).toBe(200);
      // search may answer "no matches" for a file it skips (the hard link); every other tool must fail outright
      if (tool === 'fs_search' && body.result.ok) expect(body.result.value.matches, tool).toEqual([]);
      else expect(body.result.ok, tool).toBe(false);
    }
    expect(outsideSnapshot()).toEqual(before);
  });

  it('refuses every file once the /work directory itself is swapped for a link leading outside', async () => {
    const session = await newSession(runner, 'helper');
    await invokeTool(runner, session, 'fs_write', { path: 'x.txt', content: 'x' });
    const work = join(dataDir, 'sessions', session, 'work');
    rmSync(work, { recursive: true });
    symlinkSync(base, work);
    const read = await invokeTool(runner, session, 'fs_read', { path: 'canary.txt' });
    expect(read.body.result).toEqual({ ok: false, value: { error: 'path /work/canary.txt refused: the mount directory is reached through a symbolic link' } });
    expect((await invokeTool(runner, session, 'fs_write', { path: 'canary.txt', content: 'pwned' })).body.result.ok).toBe(false);
    expect(outsideSnapshot()).toEqual(before);
  });

  it('creates nothing outside when a parent of the mount directory is a link planted before first use', async () => {
    const session = await newSession(runner, 'helper');
    symlinkSync(outsideDir, join(dataDir, 'sessions', session));
    const write = await invokeTool(runner, session, 'fs_write', { path: 'new.txt', content: 'pwned' });
    expect(write.body.result).toEqual({ ok: false, value: { error: 'path /work/new.txt refused: the mount directory is reached through a symbolic link' } });
    expect(readdirSync(outsideDir)).toEqual(['canary.txt']);
    expect(outsideSnapshot()).toEqual(before);
  });

  it('still serves the files inside the mount and shows links without following them', async () => {
    const list = await invokeTool(runner, sessionId, 'fs_list', { path: '/work' });
    expect(list.body.result.value.entries).toEqual([
      { path: '/work/hard', type: 'file' },
      { path: '/work/link-dir', type: 'symlink' },
      { path: '/work/link-file', type: 'symlink' },
      { path: '/work/seed.txt', type: 'file' },
    ]);
    expect((await invokeTool(runner, sessionId, 'fs_read', { path: 'seed.txt' })).body.result.value.content).toBe('inside');
  });
});
