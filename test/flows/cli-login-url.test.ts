import { describe, expect, it } from 'vitest';
import { cli, tempDir } from '../support/cli.ts';

/**
 * A newcomer with a local server and its owner key: with no context and no SVC_API_URL, the client talks to the
 * server `svc serve` starts on this machine (http://127.0.0.1:8080), never to a host elsewhere.
 */
const KEY = 'ao_test_localownerkeylocalowner01';

describe('the client with nothing configured', () => {
  it('addresses http://127.0.0.1:8080 and its dashboard, marked as defaults', async () => {
    const r = await cli(['context', 'show', '--json'], { SVC_CONFIG_DIR: tempDir(), SVC_API_KEY: KEY });
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ apiUrl: 'http://127.0.0.1:8080', dashboardUrl: 'http://127.0.0.1:8080', defaults: ['apiUrl', 'dashboardUrl'] });
  });

  it('`context show` says how to log in with a key, and how to name a server elsewhere', async () => {
    const r = await cli(['context', 'show'], { SVC_CONFIG_DIR: tempDir() });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/not configured/);
    expect(r.stderr).toContain('svc auth login --with-token <key>');
    expect(r.stderr).toContain('--api-url <its URL>');
  });
});
