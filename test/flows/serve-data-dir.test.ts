import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runSvc } from '../support/process.ts';

/**
 * Root with the clone under /root: the embedded PostgreSQL runs as an unprivileged OS user (`nobody`), which cannot
 * walk into a folder of mode 0700. `svc serve` says so in one line that names SVC_DATA_DIR, exits 2, and prints no
 * stack trace. Only root switches users, so this runs as root (and must, under CI).
 */
const root = process.getuid?.() === 0;

describe.skipIf(!root && !process.env.CI)('svc serve as root with its data folder where the database user cannot reach', () => {
  const base = mkdtempSync(join(tmpdir(), 'svc-datadir-'));
  chmodSync(base, 0o711); // only the folder below is closed
  afterAll(() => rmSync(base, { recursive: true, force: true }));

  it('names SVC_DATA_DIR and the folder to open, without a stack trace', async () => {
    const home = join(base, 'home');
    mkdirSync(home, { mode: 0o700 });
    chmodSync(home, 0o700);
    const r = await runSvc(['serve', '--port=0'], { SVC_DATA_DIR: join(home, 'svc', '.svc') });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`which cannot reach the cluster folder ${join(home, 'svc', '.svc', 'pg')}: ${home} is not searchable by it`);
    expect(r.stderr).toContain('set SVC_DATA_DIR to a folder it can reach, such as /var/lib/svc, or chmod o+x');
    expect(r.stderr).not.toMatch(/^\s+at /m);
  });
});
