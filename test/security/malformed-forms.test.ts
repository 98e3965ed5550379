import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestSvc } from '../support/svc.ts';
import { startOperatorSvc } from '../support/tenants.ts';

/**
 * Issue 12, item 9: the dashboard's form posts (sign-in, sign-out, CLI approval, device approval) answer a malformed
 * body with a 400 naming the problem, never a 500.
 */
const MALFORMED: Array<[string, string, string]> = [
  ['a multipart body that does not match its boundary', 'multipart/form-data; boundary=svc-boundary', 'this is not multipart at all'],
  ['a multipart content type without a boundary', 'multipart/form-data', '--x\r\ncontent-disposition: form-data; name="key"\r\n\r\nao_test\r\n--x--\r\n'],
  ['a multipart body cut off in the middle of a part', 'multipart/form-data; boundary=b', '--b\r\ncontent-disposition: form-data; name="key"\r\n\r\nao_te'],
];

describe('malformed dashboard forms', () => {
  let svc: TestSvc;
  let cookie: string;

  beforeAll(async () => {
    svc = await startOperatorSvc({}, 'conductor');
    const signedIn = await fetch(`${svc.url}/dashboard/sign-in`, { method: 'POST', body: new URLSearchParams({ key: svc.key }), redirect: 'manual' });
    expect(signedIn.status).toBe(303);
    cookie = signedIn.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
  });
  afterAll(async () => {
    await svc?.stop();
  });

  for (const path of ['/dashboard/sign-in', '/dashboard/sign-out', '/cli-auth', '/device']) {
    it(`answers ${path} with 400 naming the problem for a malformed multipart body, signed in or not`, async () => {
      for (const [what, contentType, body] of MALFORMED) {
        for (const signedIn of [false, true]) {
          const headers: Record<string, string> = { 'content-type': contentType, ...(signedIn ? { cookie } : {}) };
          const res = await fetch(svc.url + path, { method: 'POST', headers, body, redirect: 'manual' });
          // signed out, /device sends the browser to sign in before it reads the form at all
          if (path === '/device' && !signedIn) {
            expect(res.status, what).toBe(303);
            continue;
          }
          expect(res.status, `${what} (${signedIn ? 'signed in' : 'signed out'})`).toBe(400);
          expect(await res.json()).toEqual({ error: 'body: malformed form data' });
        }
      }
    });
  }
});
