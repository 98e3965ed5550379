import { createHash } from 'node:crypto';
import { chmod, mkdir, mkdtemp, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { server } from '../support/backends.ts';
import { cli, tempDir } from '../support/cli.ts';
import type { TestSvc } from '../support/svc.ts';
import { keyOf, startOperatorSvc } from '../support/tenants.ts';

/** `svc skills import` and `svc kits list|show|copy` through the real binary against an in-process server. */
let svc: TestSvc;
let cleanup: () => Promise<void>;
let owner: Record<string, string>;
let globex: Record<string, string>;

async function folder(name: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'cli-skill-'));
  await mkdir(join(dir, 'scripts'));
  await writeFile(join(dir, 'SKILL.md'), `---\nname: ${name}\ndescription: Says hello.\n---\nRun scripts/hi.sh.\n`);
  await writeFile(join(dir, 'scripts', 'hi.sh'), '#!/bin/sh\necho hi\n');
  await chmod(join(dir, 'scripts', 'hi.sh'), 0o755);
  return dir;
}

beforeAll(async () => {
  const db = await server.setup();
  cleanup = db.cleanup;
  svc = await startOperatorSvc({ DATABASE_URL: db.url });
  owner = { SVC_CONFIG_DIR: tempDir(), SVC_API_URL: svc.url, SVC_API_KEY: await keyOf(svc, 'default') };
  globex = { SVC_CONFIG_DIR: tempDir(), SVC_API_URL: svc.url, SVC_API_KEY: await keyOf(svc, 'globex') };
});
afterAll(async () => {
  await svc?.stop();
  await cleanup?.();
});

describe('svc skills import', () => {
  it('shows the dry run and, without --yes outside a terminal, imports nothing', async () => {
    const r = await cli(['skills', 'import', await folder('greeter')], owner);
    expect(r.code).toBe(2);
    const script = '#!/bin/sh\necho hi\n';
    expect(r.stdout).toContain(`scripts/hi.sh\t${script.length}\texecutable\ttext/x-shellscript\t${createHash('sha256').update(script).digest('hex')}\n`);
    expect(r.stderr).toContain('pass --yes');
    expect((await svc.api('/api/skills/greeter')).status).toBe(404);
  });

  it('imports with --yes', async () => {
    const r = await cli(['skills', 'import', await folder('greeter'), '--yes', '--json'], owner);
    expect(r.code).toBe(0);
    expect(r.json()).toMatchObject({ dryRun: { validation: { ok: true } }, imported: { name: 'greeter', source: 'imported' } });
    expect((await cli(['skills', 'list'], owner)).stdout).toContain('greeter\timported\tSays hello.');
  });

  it('refuses a folder with a symbolic link, naming it, and imports nothing', async () => {
    const dir = await folder('linky');
    await symlink('/etc/hostname', join(dir, 'scripts', 'host'));
    const r = await cli(['skills', 'import', dir, '--yes'], owner);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('scripts/host: symbolic links are not allowed');
    expect((await svc.api('/api/skills/linky')).status).toBe(404);
  });
});

describe('svc kits', () => {
  it('lists, shows and copies a kit into another tenant', async () => {
    expect((await svc.api('/api/profiles', { method: 'POST', json: { name: 'greeter-bot', runtime: 'general', model: 'demo:echo', skills: ['greeter'] } })).status).toBe(201);
    const created = await svc.api('/api/templates', { method: 'POST', key: owner.SVC_API_KEY, json: { slug: 'greeting', label: 'Greeting', source: { agent: 'greeter-bot' } } });
    expect(created.status).toBe(201);
    const kit = (await created.json()) as { id: string };
    expect((await cli(['kits', 'list'], owner)).stdout).toContain(`greeting\t${kit.id}\tagent\tv1\tdefault\tGreeting`);
    expect((await cli(['kits', 'show', kit.id, '--json'], globex)).json()).toMatchObject({ slug: 'greeting', counts: { profiles: 1, skills: 1 } });
    const copy = await cli(['kits', 'copy', 'greeting', '--org', 'default', '--json'], globex);
    expect(copy.code).toBe(0);
    expect(copy.json()).toMatchObject({ copied: true, created: [{ kind: 'skill', name: 'greeter' }, { kind: 'profile', name: 'greeter-bot' }] });
    const again = await cli(['kits', 'copy', 'greeting', '--org', 'default'], globex);
    expect(again.stdout).toContain('profile\tgreeter-bot\tunchanged\tgreeter-bot');
    expect(again.stderr).toContain('not copied: greeter-bot already exists');
    expect((await cli(['kits', 'list', '--copied'], globex)).stdout).toContain(`greeting\t${kit.id}\tagent\tv1\tdefault`);
  });
});
