import { afterAll, describe, expect, it } from 'vitest';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assertReachable, clusterUser } from './os-user.ts';

describe('the embedded cluster OS user', () => {
  const base = mkdtempSync(join(tmpdir(), 'svc-osuser-'));
  afterAll(() => rmSync(base, { recursive: true, force: true }));
  // Another user than the folder's owner: the check reads mode bits, so it holds for root too.
  const stranger = { name: 'stranger', uid: 4_000_000, gid: 4_000_000 };

  it('refuses a cluster folder below a folder the user cannot search, naming it and the fix', () => {
    const closed = join(base, 'closed');
    mkdirSync(closed, { mode: 0o700 });
    chmodSync(closed, 0o700);
    expect(() => assertReachable(stranger, join(closed, 'pg'), 'the cluster folder')).toThrow(
      `embedded PostgreSQL runs as OS user "stranger", which cannot reach the cluster folder ${closed}/pg: ${closed} is not searchable by it (choose another place, or chmod o+x ${closed})`,
    );
  });

  it('accepts a cluster folder whose parents others may search', () => {
    const open = join(base, 'open');
    mkdirSync(open);
    chmodSync(open, 0o711);
    chmodSync(base, 0o711);
    expect(() => assertReachable(stranger, join(open, 'pg'), 'the cluster folder')).not.toThrow();
  });

  it('names a missing OS user when svc runs as root, and never switches users otherwise', () => {
    if (process.getuid!() === 0) expect(() => clusterUser('svc-no-such-user')).toThrow(/OS user "svc-no-such-user" \(SVC_PG_OS_USER\) does not exist/);
    else expect(clusterUser('svc-no-such-user')).toEqual({ name: 'self', uid: undefined, gid: undefined });
  });
});

describe('binaries the cluster user cannot reach', () => {
  it('are staged once into the temporary folder and run from there', async () => {
    const { binariesFor } = await import('./binaries.ts');
    const hidden = mkdtempSync(join(tmpdir(), 'svc-hidden-'));
    chmodSync(hidden, 0o700);
    mkdirSync(join(hidden, 'native', 'bin'), { recursive: true });
    for (const name of ['initdb', 'postgres']) writeFileSync(join(hidden, 'native', 'bin', name), '#!/bin/sh\n', { mode: 0o755 });
    const version = `test-${process.pid}`;
    const stranger = { name: 'stranger', uid: 4_000_000, gid: 4_000_000 };
    try {
      const bin = await binariesFor(stranger, { initdb: join(hidden, 'native', 'bin', 'initdb'), postgres: join(hidden, 'native', 'bin', 'postgres'), version });
      expect(bin.postgres).toBe(join(tmpdir(), `svc-pg-bin-${version}`, 'bin', 'postgres'));
      expect(statSync(bin.postgres).mode & 0o755).toBe(0o755);
      expect(assertReachable(stranger, bin.postgres, 'the binaries')).toBeUndefined();
      expect((await binariesFor(stranger, { ...bin, postgres: join(hidden, 'native', 'bin', 'postgres') })).postgres).toBe(bin.postgres); // reused
    } finally {
      rmSync(hidden, { recursive: true, force: true });
      rmSync(join(tmpdir(), `svc-pg-bin-${version}`), { recursive: true, force: true });
    }
  });
});
