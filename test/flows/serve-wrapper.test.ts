import { afterEach, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer, connect, type Server } from 'node:net';
import { delimiter, join } from 'node:path';
import { runSvc, SVC_BIN } from '../support/process.ts';

// `node bin/svc.js` as a user types it: the first `node` on PATH outside node_modules (on a machine whose node is older
// than 22 the wrapper re-runs itself on the project's Node 24 in a child, which is what these tests are about).
const userNode = () => {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir || dir.includes('node_modules')) continue;
    if (existsSync(join(dir, 'node'))) return join(dir, 'node');
  }
  return process.execPath;
};

const portRefuses = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = connect({ port, host: '127.0.0.1' });
    s.once('connect', () => (s.destroy(), resolve(false)));
    s.once('error', () => resolve(true));
  });

/** Polls until the port no longer accepts connections (false if it still does at the deadline). */
async function portFreed(port: number, deadlineMs = 20_000): Promise<boolean> {
  const until = Date.now() + deadlineMs;
  while (Date.now() < until) {
    if (await portRefuses(port)) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

describe('bin/svc.js as the process a user or a service manager stops', () => {
  const children: ChildProcess[] = [];
  const servers: Server[] = [];
  afterEach(async () => {
    for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
  });

  it('SIGTERM to the wrapper\'s pid stops the server: the port is free and the wrapper exits with the server\'s code', async () => {
    const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', SVC_LOG_LEVEL: 'warn', DATABASE_URL: 'memory' };
    const wrapper = spawn(userNode(), [SVC_BIN, 'serve', '--role=conductor', '--port=0'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(wrapper);
    let out = '';
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => wrapper.on('exit', (code, signal) => r({ code, signal })));
    const url = await new Promise<string>((resolve, reject) => {
      const onData = (d: Buffer) => {
        out += d;
        const m = /svc listening on (http:\/\/\S+)/.exec(out);
        if (m) resolve(m[1]);
      };
      wrapper.stdout!.on('data', onData);
      wrapper.stderr!.on('data', onData);
      void exited.then(() => reject(new Error(`svc exited before listening:\n${out}`)));
    });
    expect(await (await fetch(url + '/healthz')).text()).toBe('ok');
    const port = Number(new URL(url).port);

    wrapper.kill('SIGTERM');
    expect(await exited).toEqual({ code: 0, signal: null });
    expect(await portFreed(port)).toBe(true);
    expect(out).toMatch(/SIGTERM received, shutting down/);
  });

  it('a port already in use is one line naming the port and exit 2, and the embedded PostgreSQL it started is stopped', async () => {
    const taken = createServer();
    servers.push(taken);
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    const port = (taken.address() as { port: number }).port;
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-port-taken-'));
    chmodSync(dataDir, 0o711); // as root, the embedded cluster's OS user must be able to reach <dataDir>/pg
    try {
      const res = await runSvc(['serve', '--role=conductor', `--port=${port}`], { SVC_DATA_DIR: dataDir });
      expect(res.code).toBe(2);
      expect(res.stderr.trim().split('\n')).toEqual([`svc: port ${port} on 127.0.0.1 is already in use; stop what holds it or pass --port (env PORT)`]);
      // PostgreSQL starts before the port is bound (it boots while the modules load): it was stopped cleanly
      expect(existsSync(join(dataDir, 'pg', 'PG_VERSION'))).toBe(true);
      expect(existsSync(join(dataDir, 'pg', 'postmaster.pid'))).toBe(false);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
