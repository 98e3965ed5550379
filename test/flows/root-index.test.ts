import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { VERSION } from '../../src/app/index.ts';
import { startTestSvc, type TestSvc } from '../support/svc.ts';

/** `GET /` is where a newcomer's browser or curl lands first: a small index of what this server answers. */
describe('GET / on an all-in-one server', () => {
  let svc: TestSvc;
  beforeAll(async () => {
    svc = await startTestSvc({ DATABASE_URL: 'memory' }, 'all');
  });
  afterAll(async () => {
    await svc?.stop();
  });

  it('answers the name, the version and links to the dashboard, the reference and the health endpoints, without a key', async () => {
    const res = await fetch(svc.url + '/');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const body = (await res.json()) as { name: string; version: string; links: Record<string, string> };
    expect(body).toMatchObject({ name: 'svc', version: VERSION });
    // where a newcomer goes next: the dashboard, the health endpoints (and the reference, below)
    expect(body.links).toMatchObject({ dashboard: '/dashboard', healthz: '/healthz', readyz: '/readyz', metrics: '/metrics' });
    // every link answers once the server is ready (the job queue comes up just after the server starts serving);
    // nothing is linked that is not there
    await vi.waitFor(async () => expect((await fetch(svc.url + '/readyz')).status).toBe(200), { timeout: 15_000, interval: 50 });
    for (const [name, path] of Object.entries(body.links)) {
      expect((await fetch(svc.url + path)).status, `${name} ${path}`).toBe(200);
    }
    for (const [name, path] of [['docs', '/docs'], ['openapi', '/openapi.json']]) {
      if ((await fetch(svc.url + path)).status === 404) expect(body.links[name]).toBeUndefined();
      else expect(body.links[name]).toBe(path);
    }
  });
});
