import { EventEmitter } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it, onTestFailed, vi } from 'vitest';
import { MODEL, startCluster, type Cluster, type ClusterNode } from '../support/cluster.ts';

/**
 * Webhooks across real conductor processes on one PostgreSQL database. Two replicas deliver each event once, whichever
 * of them recorded it; a conductor SIGKILLed right after the commit that wrote an event delivers it once after its
 * restart. SVC_WEBHOOK_SCHEDULE_S=3,1,1: a first attempt 3 s after the event (the window in which the kill lands).
 */
interface Hit {
  id: string;
  body: string;
  headers: Record<string, string>;
}
const WAIT = { timeout: 30_000, interval: 100 };
const arrivals = new EventEmitter();
const hits: Hit[] = [];
const until = <T>(probe: () => T | undefined | false): Promise<T> =>
  new Promise((resolve) => {
    const check = () => {
      const v = probe();
      if (v) {
        arrivals.off('arrival', check);
        resolve(v);
      }
    };
    arrivals.on('arrival', check);
    check();
  });
const count = (eventId: string) => hits.filter((h) => h.id === eventId).length;

describe('webhooks with two conductor processes', () => {
  let cluster: Cluster;
  let A: ClusterNode;
  let B: ClusterNode;
  let receiver: Server;
  let url: string;
  let hook: { id: string; secret: string };

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        hits.push({ id: String(req.headers['webhook-id']), body, headers: req.headers as Record<string, string> });
        res.writeHead(204).end();
        arrivals.emit('arrival');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
    url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    cluster = await startCluster({ conductors: 2, runners: 1, env: { SVC_WEBHOOK_SCHEDULE_S: '3,1,1' } });
    [A, B] = cluster.conductors;
    const made = await cluster.api(A, '/api/webhooks', { method: 'POST', json: { url, events: ['webhook.test', 'run.completed'] } });
    expect(made.status).toBe(201);
    hook = (await made.json()) as typeof hook;
    expect((await cluster.api(A, '/api/profiles', { method: 'POST', json: { name: 'helper', runtime: 'general', model: MODEL } })).status).toBe(201);
  }, 90_000);
  afterAll(async () => {
    await cluster?.stop();
    await new Promise<void>((r) => (receiver ? (receiver.closeAllConnections(), receiver.close(() => r())) : r()));
  });

  const test = async (on: ClusterNode) => {
    const res = await cluster.api(on, `/api/webhooks/${hook.id}/test`, { method: 'POST' });
    expect(res.status).toBe(202);
    return (await res.json()) as { id: string; eventId: string };
  };
  const delivery = async (on: ClusterNode, id: string) => (await (await cluster.api(on, `/api/webhooks/${hook.id}/deliveries/${id}`)).json()) as { status: string; attempts: number };

  it('delivers each event once with both replicas working the queue, whichever recorded it', async () => {
    onTestFailed(() => console.error(cluster.logs()));
    const sent = await Promise.all(Array.from({ length: 12 }, (_, i) => test(i % 2 ? A : B)));
    const runs = await Promise.all(
      [A, B].map(async (c) => ((await (await cluster.api(c, '/api/runs', { method: 'POST', json: { profile: 'helper', prompt: 'hello' } })).json()) as { runId: string }).runId),
    );
    await until(() => sent.every((s) => count(s.eventId) >= 1));
    const completed = await until(() => {
      const mine = hits.map((h) => new Webhook(hook.secret).verify(h.body, h.headers) as any).filter((p) => p.type === 'run.completed' && runs.includes(p.data.runId));
      return mine.length >= 2 && mine;
    });
    expect(completed.map((p) => p.data.runId).sort()).toEqual([...runs].sort());
    // a later event has arrived after all of them: nothing came twice meanwhile
    const sentinel = await test(A);
    await until(() => count(sentinel.eventId) >= 1);
    for (const s of sent) expect(count(s.eventId), s.eventId).toBe(1);
    expect(hits.filter((h) => completed.some((p) => p.id === h.id))).toHaveLength(2);
    for (const s of sent) expect(await delivery(B, s.id)).toMatchObject({ status: 'delivered', attempts: 1 });
  }, 90_000);

  it('delivers once, after its restart, an event whose conductor was killed right after the commit', async () => {
    onTestFailed(() => console.error(cluster.logs()));
    await B.kill('SIGKILL');
    const sent = await test(A);
    await A.kill('SIGKILL');
    // the first attempt was 3 s away: nothing left before the kill
    expect(count(sent.eventId)).toBe(0);
    await A.start();
    await until(() => count(sent.eventId) >= 1);
    await vi.waitFor(async () => expect(await delivery(A, sent.id)).toMatchObject({ status: 'delivered', attempts: 1 }), WAIT);
    const sentinel = await test(A);
    await until(() => count(sentinel.eventId) >= 1);
    expect(count(sent.eventId)).toBe(1);
    expect(new Webhook(hook.secret).verify(hits.find((h) => h.id === sent.eventId)!.body, hits.find((h) => h.id === sent.eventId)!.headers)).toMatchObject({ id: sent.eventId, type: 'webhook.test' });
  }, 90_000);
});
