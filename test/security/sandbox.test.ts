import { spawn } from 'node:child_process';
import { chmodSync, chownSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { NODE } from '../support/process.ts';
import { serve, tempDir, type Served } from './support.ts';

/**
 * Issue 12, deliverable 2: the command sandbox itself. Where bubblewrap cannot run, profiles that run commands are
 * refused when they are saved (naming the cause and the fix) unless the operator opted out; and the helper works for
 * an unprivileged user (user namespaces), not only for root.
 */
const OWNER_KEY = 'ao_test_sandboxsandboxsandbox0001';
const started: Served[] = [];
afterEach(async () => {
  for (const s of started.splice(0)) await s.stop();
});

describe('the command sandbox', () => {
  it('refuses @exec profiles with a 400 naming the cause and the fix where bubblewrap is missing, unless SVC_SANDBOX=off', async () => {
    // a PATH without bubblewrap on it
    const emptyPath = tempDir('path');
    const svc = await serve(['--role=all'], { PATH: emptyPath, SVC_BOOTSTRAP_TOKEN: OWNER_KEY, SVC_LOG_LEVEL: 'error' }, OWNER_KEY, { database: true });
    started.push(svc);
    for (const tools of [['@exec'], ['run_command'], ['@all']]) {
      const res = await svc.api('/api/profiles', { json: { name: 'builder', runtime: 'general', model: 'demo:echo', tools } });
      expect(res.status).toBe(400);
      const { error } = await res.json();
      expect(error).toMatch(/^tools: run_command needs the command sandbox, which runner runner-[0-9a-f]{8} cannot provide: bubblewrap \(bwrap\) is not installed/);
      expect(error).toContain('apt-get install bubblewrap');
      expect(error).toContain('SVC_SANDBOX=off');
    }
    expect((await svc.api('/api/profiles', { json: { name: 'reader', runtime: 'general', model: 'demo:echo', tools: ['@files'] } })).status).toBe(201);
    const update = await svc.api('/api/profiles/reader', { method: 'PUT', json: { name: 'reader', runtime: 'general', model: 'demo:echo', tools: ['@exec'] } });
    expect(update.status).toBe(400);
    // a /v1 session with a hosted environment (whose profile runs commands) is refused too, in the /v1 error shape and
    // worded for /v1 users, who never named tools: the environment, the cause and the fixes
    const v1 = { 'openai-beta': 'agents=v1' };
    const agent = await (await svc.api('/v1/agents', { headers: v1, json: { model: 'svc/demo/echo' } })).json();
    const hosted = await svc.api('/v1/agents/sessions', { headers: v1, json: { agent_id: agent.id, environment: { type: 'openai_hosted' } } });
    expect(hosted.status).toBe(400);
    const { error: v1Error } = await hosted.json();
    expect(v1Error).toMatchObject({
      type: 'invalid_request_error',
      param: 'environment',
      message: expect.stringMatching(/^environment: a hosted environment runs its commands in the command sandbox, which runner runner-[0-9a-f]{8} cannot provide: bubblewrap \(bwrap\) is not installed.*apt-get install bubblewrap.*SVC_SANDBOX=off.*; or use environment type none/),
    });
    expect(v1Error.message).not.toMatch(/tools|run_command/);
    const plain = await svc.api('/v1/agents/sessions', { headers: v1, json: { agent_id: agent.id, environment: { type: 'none' } } });
    expect(plain.status).toBe(200);
    // the refused session left nothing behind
    const listed = await (await svc.api('/v1/agents/sessions', { headers: v1 })).json();
    expect(listed.data.map((x: { id: string }) => x.id)).toEqual([(await plain.json()).id]);

    const optedOut = await serve(['--role=all'], { PATH: emptyPath, SVC_SANDBOX: 'off', SVC_BOOTSTRAP_TOKEN: OWNER_KEY, SVC_LOG_LEVEL: 'error' }, OWNER_KEY, { database: true });
    started.push(optedOut);
    expect((await optedOut.api('/api/profiles', { json: { name: 'builder', runtime: 'general', model: 'demo:echo', tools: ['@exec'] } })).status).toBe(201);
    rmSync(emptyPath, { recursive: true, force: true });
  });

  it('contains an unprivileged user too, in a user namespace of its own', async () => {
    const asRoot = process.getuid?.() === 0;
    const work = mkdtempSync(join(tmpdir(), 'svc-sandbox-user-'));
    try {
      // as root here: run the helper as nobody, whose folder this is; otherwise as ourselves
      if (asRoot) chownSync(work, 65534, 65534);
      chmodSync(work, 0o700);
      const script = fileURLToPath(new URL('./fixtures/sandbox-as-user.ts', import.meta.url));
      const command = 'id -u; echo made > made.txt; ls /root 2>&1; cat /proc/1/environ | tr "\\0" "\\n"; ls /proc | grep -c "^[0-9]"';
      const output = await new Promise<string>((resolve, reject) => {
        const child = spawn(NODE, [script, work, command], {
          env: { PATH: process.env.PATH ?? '/usr/bin:/bin', SVC_CANARY: 'canary-of-the-parent' },
          stdio: ['ignore', 'pipe', 'inherit'],
          ...(asRoot ? { uid: 65534, gid: 65534 } : {}),
        });
        let out = '';
        child.stdout.on('data', (d) => (out += d));
        child.once('error', reject);
        child.once('close', () => resolve(out));
      });
      const result = JSON.parse(output) as { status: { available: boolean; detail: string }; code: number; out: string; uid: number };
      expect(result.status).toMatchObject({ available: true, detail: expect.stringContaining('with a user namespace') });
      expect(result.uid).not.toBe(0);
      const [uid, ...rest] = result.out.trim().split('\n');
      expect(Number(uid)).toBe(result.uid);
      expect(result.out).toContain("ls: cannot access '/root': No such file or directory");
      expect(result.out).not.toContain('canary-of-the-parent');
      expect(Number(rest.at(-1))).toBeLessThan(6); // bwrap, the shell and its pipeline: no host process
      expect(result.code).toBe(0);
      expect(readFileSync(join(work, 'made.txt'), 'utf8')).toBe('made\n');
      expect(statSync(join(work, 'made.txt')).uid).toBe(result.uid);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });
});
