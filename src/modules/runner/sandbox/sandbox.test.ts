import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createSandbox } from './sandbox.ts';

let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A `bwrap` on a PATH of its own that refuses one option, as an older bubblewrap does, and runs the real one otherwise. */
function olderBwrap(refused: string): string {
  dir = mkdtempSync(join(tmpdir(), 'svc-bwrap-'));
  const script = `#!/bin/bash
if [ "$1" = --version ]; then echo "bubblewrap 0.6.1"; exit 0; fi
args="$(mktemp -p ${dir})"
cat <&3 > "$args"
if tr '\\0' '\\n' < "$args" | grep -qx -- '${refused}'; then echo "bwrap: Unknown option ${refused}" >&2; exit 1; fi
exec /usr/bin/bwrap "$@" 3<"$args"
`;
  writeFileSync(join(dir, 'bwrap'), script);
  chmodSync(join(dir, 'bwrap'), 0o755);
  return dir;
}

describe('the sandbox probe', () => {
  it('falls back to the strongest form this bubblewrap supports, and says so', async () => {
    const sandbox = createSandbox({ mode: 'bwrap', searchPath: olderBwrap('--disable-userns') });
    expect(await sandbox.ready()).toEqual({
      mode: 'bwrap',
      available: true,
      detail: `bubblewrap 0.6.1 at ${dir}/bwrap, with a user namespace (this bubblewrap cannot forbid nested ones; 0.8 or later can)`,
    });
  });

  it('reports a bubblewrap that cannot build a sandbox, with its own words and the fix', async () => {
    const sandbox = createSandbox({ mode: 'bwrap', searchPath: olderBwrap('--unshare-pid') });
    const status = await sandbox.ready();
    expect(status).toMatchObject({ mode: 'bwrap', available: false });
    expect(status.detail).toMatch(/^bubblewrap at \S+ cannot create a sandbox here \(bwrap: Unknown option --unshare-pid\); fix: install bubblewrap/);
    expect(() => sandbox.spawn({ argv: ['true'], cwd: '/', env: {}, mounts: [], network: false })).toThrow(/the command sandbox is unavailable/);
  });

  it('reports a missing bubblewrap, and the operator\'s opt-out', async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-bwrap-'));
    expect((await createSandbox({ mode: 'bwrap', searchPath: dir }).ready()).detail).toMatch(/^bubblewrap \(bwrap\) is not installed \(not found on PATH\); fix: .*apt-get install bubblewrap.*SVC_SANDBOX=off/);
    expect(await createSandbox({ mode: 'off', searchPath: dir }).ready()).toMatchObject({ mode: 'off', available: false, detail: expect.stringMatching(/^SVC_SANDBOX=off/) });
  });
});
