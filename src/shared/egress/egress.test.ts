import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PUBLIC_FORMS, REFUSED_FORMS } from '../../../test/support/address-forms.ts';
import { AddressRefused, checkUrl, createGuardedFetch, POLICY_NOTE, resolvedProblem, type Resolve } from './index.ts';

/** A local HTTP server that counts the connections it accepts: a refused call must never reach it. */
let server: Server;
let port: number;
let connections = 0;
beforeAll(async () => {
  server = createServer((_req, res) => res.end('reached'));
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const deny = createGuardedFetch({ privateAddresses: 'deny' });
const allow = createGuardedFetch({ privateAddresses: 'allow' });

describe('the address policy, as a URL is written (validation)', () => {
  it(`refuses each of ${REFUSED_FORMS.length} forms of an internal address with deny, naming the address and the policy`, () => {
    expect(REFUSED_FORMS.length).toBeGreaterThanOrEqual(30);
    for (const { url, names } of REFUSED_FORMS) {
      const problem = checkUrl(url, 'deny');
      expect(problem, url).toMatch(names);
      expect(problem, url).toContain(POLICY_NOTE);
      expect(checkUrl(url, 'allow'), url).toBeUndefined();
    }
  });

  it('lets public hosts through, including IPv6 forms that embed a public IPv4 address', () => {
    for (const url of PUBLIC_FORMS) expect(checkUrl(url, 'deny'), url).toBeUndefined();
  });

  it('calls http(s) only, whatever the policy', () => {
    expect(checkUrl('file:///etc/passwd', 'allow')).toBe('file: URLs are not called; use http(s)');
    expect(checkUrl('gopher://example.com/', 'deny')).toBe('gopher: URLs are not called; use http(s)');
    expect(checkUrl('not a url', 'deny')).toBe('not a URL');
  });
});

describe('the guarded fetcher, when it connects', () => {
  it(`refuses each of ${REFUSED_FORMS.length} forms with deny before any connection, with the refusal as the error`, async () => {
    for (const { url, names } of REFUSED_FORMS) {
      const err = await deny(url).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err, url).toBeInstanceOf(AddressRefused);
      expect((err as Error).message, url).toMatch(names);
    }
  });

  it('never reaches a local server through its loopback spellings with deny, and does with allow', async () => {
    const spellings = [`http://127.0.0.1:${port}/`, `http://2130706433:${port}/`, `http://127.1:${port}/`, `http://[::ffff:127.0.0.1]:${port}/`, `http://localhost:${port}/`];
    const before = connections;
    for (const url of spellings) await expect(deny(url), url).rejects.toBeInstanceOf(AddressRefused);
    expect(connections).toBe(before);
    for (const url of spellings) expect(await (await allow(url)).text(), url).toBe('reached');
    expect(connections).toBeGreaterThan(before);
  });

  it('refuses at connect time a name that validation let through, when any address it resolves to is internal', async () => {
    const resolve: Resolve = async (host) => (host === 'inside.test' ? [{ address: '93.184.216.34', family: 4 }, { address: '10.0.0.5', family: 4 }] : Promise.reject(new Error(`getaddrinfo ENOTFOUND ${host}`)));
    const guarded = createGuardedFetch({ privateAddresses: 'deny', resolve });
    expect(checkUrl('http://inside.test/hook', 'deny')).toBeUndefined();
    await expect(guarded('http://inside.test/hook')).rejects.toThrow(new AddressRefused(`inside.test resolves to 10.0.0.5, a private address; ${POLICY_NOTE}`));
    // a name that does not resolve fails as fetch does, not as a refusal
    const gone = await guarded('http://nowhere.test/').catch((e: unknown) => e);
    expect(gone).not.toBeInstanceOf(AddressRefused);
    expect(String((gone as Error).cause)).toContain('ENOTFOUND nowhere.test');
  });

  it('is not fooled by a name that answers a public address to the check and a loopback one to the connection (DNS rebinding)', async () => {
    let asked = 0;
    const rebinding: Resolve = async () => (asked++ === 0 ? [{ address: '93.184.216.34', family: 4 }] : [{ address: '127.0.0.1', family: 4 }]);
    const url = `http://rebind.test:${port}/`;
    // the check before work starts sees a public address...
    expect(await resolvedProblem(url, 'deny', rebinding)).toBeUndefined();
    // ...and the connection, which resolves again, is refused: the local server is never reached
    const before = connections;
    await expect(createGuardedFetch({ privateAddresses: 'deny', resolve: rebinding })(url)).rejects.toThrow(/rebind\.test resolves to 127\.0\.0\.1, a loopback address/);
    expect(connections).toBe(before);
  });
});

describe('the check before work starts', () => {
  it('names a host that resolves to an internal address, or cannot be resolved, and passes public ones', async () => {
    const resolve: Resolve = async (host) => (host === 'inside.example' ? [{ address: '10.0.0.5', family: 4 }] : host === 'outside.example' ? [{ address: '93.184.216.34', family: 4 }] : Promise.reject(new Error(`getaddrinfo ENOTFOUND ${host}`)));
    expect(await resolvedProblem('https://outside.example/mcp', 'deny', resolve)).toBeUndefined();
    expect(await resolvedProblem('http://inside.example/mcp', 'deny', resolve)).toBe(`inside.example resolves to 10.0.0.5, a private address; ${POLICY_NOTE}`);
    expect(await resolvedProblem('http://nowhere.example/mcp', 'deny', resolve)).toBe('nowhere.example could not be resolved (getaddrinfo ENOTFOUND nowhere.example)');
    expect(await resolvedProblem('http://[::ffff:127.0.0.1]/', 'deny', resolve)).toMatch(/IPv4-mapped/);
    expect(await resolvedProblem('http://inside.example/mcp', 'allow', resolve)).toBeUndefined();
  });
});
