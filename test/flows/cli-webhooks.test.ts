import { EventEmitter } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestSvc, type TestSvc } from '../support/svc.ts';
import { cli, tempDir } from '../support/cli.ts';

/** `svc webhooks …` through the real binary against an in-process server, delivering to a receiver on 127.0.0.1. */
const OWNER = 'ao_test_bootstrapbootstrapbootstrap01';

describe('svc webhooks', () => {
  let svc: TestSvc;
  let env: Record<string, string>;
  let receiver: Server;
  let url: string;
  const bodies: Array<{ body: string; headers: Record<string, string> }> = [];
  const arrivals = new EventEmitter();
  beforeAll(async () => {
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        bodies.push({ body, headers: req.headers as Record<string, string> });
        res.writeHead(204).end();
        arrivals.emit('arrival');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
    url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/cli`;
    svc = await startTestSvc({}, 'conductor');
    env = { SVC_CONFIG_DIR: tempDir(), SVC_API_URL: svc.url, SVC_API_KEY: OWNER };
  });
  afterAll(async () => {
    await svc?.stop();
    await new Promise<void>((r) => (receiver ? (receiver.closeAllConnections(), receiver.close(() => r())) : r()));
  });

  it('creates an endpoint showing its secret once, lists it, sends a test event, shows the delivery, and deletes it', async () => {
    const made = (await cli(['webhooks', 'create', url, '--events', 'run.*, webhook.test', '--description', 'from the cli', '--json'], env)).json();
    expect(made).toMatchObject({ id: expect.stringMatching(/^whk_/), url, events: ['run.*', 'webhook.test'], description: 'from the cli', secret: expect.stringMatching(/^whsec_/) });
    const listed = await cli(['webhooks', 'list'], env);
    expect(listed.stdout).toContain(`${made.id}\t${url}\trun.*,webhook.test\tenabled`);
    expect(listed.stdout).not.toContain(made.secret);

    const sent = (await cli(['webhooks', 'test', made.id, '--json'], env)).json();
    expect(sent).toMatchObject({ event: 'webhook.test', status: 'pending', eventId: expect.stringMatching(/^evt_/) });
    const hit = await new Promise<(typeof bodies)[number]>((resolve) => {
      const check = () => {
        const h = bodies.find((b) => b.headers['webhook-id'] === sent.eventId);
        if (h) resolve(h);
      };
      arrivals.on('arrival', check);
      check();
    });
    expect(new Webhook(made.secret).verify(hit.body, hit.headers)).toMatchObject({ type: 'webhook.test' });
    await vi.waitFor(async () => {
      expect((await cli(['webhooks', 'deliveries', made.id], env)).stdout).toMatch(new RegExp(`^${sent.id}\\twebhook\\.test\\tdelivered\\t1\\t204\\t\\d+ ms`, 'm'));
    }, { timeout: 15_000, interval: 200 });

    const unknown = await cli(['webhooks', 'delete', 'whk_nope'], env);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain('unknown webhook: whk_nope');
    expect((await cli(['webhooks', 'delete', made.id], env)).code).toBe(0);
    expect((await cli(['webhooks', 'list', '--json'], env)).json()).toEqual([]);
  });
});
