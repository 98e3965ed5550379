import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSvc, type TestSvc } from '../support/svc.ts';
import { cli, tempDir } from '../support/cli.ts';

/** `svc memory …` through the real binary against an in-process server. */
const OWNER = 'ao_test_bootstrapbootstrapbootstrap01';

describe('svc memory', () => {
  let svc: TestSvc;
  let env: Record<string, string>;
  beforeAll(async () => {
    svc = await startTestSvc({}, 'conductor');
    env = { SVC_CONFIG_DIR: tempDir(), SVC_API_URL: svc.url, SVC_API_KEY: OWNER };
  });
  afterAll(async () => {
    await svc?.stop();
  });

  it('creates a store, writes, lists, reads, searches, renames, and restores an earlier version', async () => {
    expect((await cli(['memory', 'create', 'notes', '--description', 'team notes', '--max-entries', '50', '--json'], env)).json()).toMatchObject({ name: 'notes', scope: 'shared', limits: { maxEntries: 50 } });
    expect((await cli(['memory', 'stores'], env)).stdout).toContain('notes\tshared\t0\t0\tteam notes');

    expect((await cli(['memory', 'write', 'notes', '/plan.md', '--content', 'ship on friday', '--json'], env)).json()).toMatchObject({ path: '/plan.md', version: 1 });
    const file = join(tempDir(), 'plan.md');
    writeFileSync(file, 'ship on monday\n');
    expect((await cli(['memory', 'write', 'notes', '/plan.md', '--file', file, '--json'], env)).json()).toMatchObject({ version: 2 });
    const stale = await cli(['memory', 'write', 'notes', '/plan.md', '--content', 'x', '--expect-version', '1'], env);
    expect(stale.code).not.toBe(0);
    expect(stale.stderr).toMatch(/changed since version 1 was read: it is at version 2/);

    expect((await cli(['memory', 'ls', 'notes'], env)).stdout).toMatch(/^\/plan\.md\t15\t2\t/);
    expect((await cli(['memory', 'cat', 'notes', '/plan.md'], env)).stdout).toBe('ship on monday\n');
    expect((await cli(['memory', 'search', 'notes', 'monday'], env)).stdout).toMatch(/^\/plan\.md\t[0-9.]+\tship on «monday»/);

    const history = (await cli(['memory', 'history', 'notes', '/plan.md', '--json'], env)).json();
    expect(history.map((v: any) => v.version)).toEqual([2, 1]);
    expect((await cli(['memory', 'restore', 'notes', history[1].id, '--json'], env)).json()).toMatchObject({ version: 3 });
    expect((await cli(['memory', 'cat', 'notes', '/plan.md'], env)).stdout).toBe('ship on friday\n');

    expect((await cli(['memory', 'mv', 'notes', '/plan.md', '/archive/plan.md', '--json'], env)).json()).toMatchObject({ path: '/archive/plan.md' });
    expect((await cli(['memory', 'rm', 'notes', '/archive/plan.md'], env)).code).toBe(0);
    expect((await cli(['memory', 'ls', 'notes', '--json'], env)).json()).toEqual([]);
    expect((await cli(['memory', 'drop', 'notes'], env)).code).toBe(0);
  });

  it('reaches one end user of a per_user store with --user', async () => {
    await cli(['memory', 'create', 'people', '--per-user'], env);
    await cli(['memory', 'write', 'people', '/me.md', '--content', 'likes jazz', '--user', 'ann'], env);
    expect((await cli(['memory', 'cat', 'people', '/me.md', '--user', 'ann'], env)).stdout).toBe('likes jazz\n');
    const none = await cli(['memory', 'cat', 'people', '/me.md', '--user', 'ben'], env);
    expect(none.code).not.toBe(0);
    expect((await cli(['memory', 'users', 'people'], env)).stdout).toMatch(/^ann\t1\t10\t/);
    const missing = await cli(['memory', 'ls', 'people'], env);
    expect(missing.stderr).toMatch(/userId: memory store people is per_user/);
  });
});
