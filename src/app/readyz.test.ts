import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import type { ReadyReport } from '../shared/readiness.ts';
import { readyz } from './readyz.ts';

/** `/readyz` lists what passing checks found wanting as `warnings`, and they never make the instance unready. */
describe('GET /readyz warnings', () => {
  const app = (report: ReadyReport) => new Hono().get('/readyz', readyz([async () => report], () => false));
  const runner = { name: 'runner http://r:7070', ok: true, ms: 1, detail: 'sandbox limits best-effort: …', warning: 'sandbox limits best-effort, not enforced: disk: no loop device' };

  it('answers 200 with the warnings beside the checks', async () => {
    const res = await app({ ready: true, checks: [runner], problems: [] }).request('/readyz');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ready', checks: [runner], warnings: ['runner http://r:7070: sandbox limits best-effort, not enforced: disk: no loop device'] });
  });

  it('has no warnings field when nothing is wanting', async () => {
    const plain = { name: 'database', ok: true, ms: 1 };
    expect(await (await app({ ready: true, checks: [plain], problems: [] }).request('/readyz')).json()).toEqual({ status: 'ready', checks: [plain] });
  });
});
