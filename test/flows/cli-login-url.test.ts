import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, tempDir } from '../support/cli.ts';

/**
 * A newcomer with a local server and its owner key: `svc auth login --with-token` without a URL must not send that
 * key to the baked-in hosted API to verify it; it says how to point at a self-hosted server instead.
 */
describe('svc auth login --with-token without an API URL', () => {
  it('refuses before any request (exit 2) and names --api-url http://localhost:8080', async () => {
    const dir = tempDir();
    const r = await cli(['auth', 'login', '--with-token', 'ao_test_localownerkeylocalowner01'], { SVC_CONFIG_DIR: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('no API URL: --with-token would send the key to the hosted API https://api.svc.dev');
    expect(r.stderr).toContain('--api-url http://localhost:8080');
    expect(r.stderr).not.toMatch(/cannot reach/);
    expect(existsSync(join(dir, 'config.json'))).toBe(false);
  });

  it('`context show` with nothing configured points at --api-url for a self-hosted server', async () => {
    const r = await cli(['context', 'show'], { SVC_CONFIG_DIR: tempDir() });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/not configured/);
    expect(r.stderr).toContain('svc auth login --api-url http://localhost:8080');
  });
});
