import { defineCommand } from 'citty';
import { globalArgs, limitArg } from './args.ts';
import { printList, readLimit } from './client/list.ts';
import type { Output } from './client/output.ts';
import { openSession } from './client/session.ts';

/** `svc webhooks list|create|delete|test|deliveries|retry`: /api/webhooks from the command line. */
interface EndpointRecord {
  id: string;
  url: string;
  description: string;
  events: string[];
  enabled: boolean;
  disabledReason: string | null;
  secret?: string;
}
interface DeliveryRecord {
  id: string;
  eventId: string;
  event: string;
  status: string;
  attempts: number;
  lastResponseCode: number | null;
  lastLatencyMs: number | null;
  lastError: string | null;
  nextAttemptAt: string | null;
  createdAt: string;
}

const idArg = { id: { type: 'positional', description: 'webhook id (whk_…)', required: true } } as const;
const enc = encodeURIComponent;

function printEndpoint(out: Output, e: EndpointRecord): void {
  if (out.json) return out.data(e);
  out.fields([
    ['id', e.id],
    ['url', e.url],
    ['events', e.events.join(', ')],
    ['description', e.description || null],
    ['enabled', e.enabled],
    ...(e.disabledReason ? ([['disabled because', e.disabledReason]] as Array<[string, string]>) : []),
    // shown this once: the server never answers it again
    ...(e.secret ? ([['secret', e.secret]] as Array<[string, string]>) : []),
  ]);
}

function printDelivery(out: Output, d: DeliveryRecord): void {
  if (out.json) return out.data(d);
  out.fields([
    ['id', d.id],
    ['event', `${d.event} (${d.eventId})`],
    ['status', d.status],
    ['attempts', d.attempts],
    ['last response', d.lastResponseCode],
    ['next attempt', d.nextAttemptAt],
  ]);
}

export default defineCommand({
  meta: { name: 'webhooks', description: 'Webhook endpoints: signed events of runs, sessions, automations, workflows and billing' },
  subCommands: {
    list: defineCommand({
      meta: { name: 'list', description: 'List webhook endpoints' },
      args: { ...globalArgs },
      async run({ args }) {
        const { out, api } = openSession(args, { needKey: true });
        const items = await api.get<EndpointRecord[]>('/api/webhooks');
        printList(out, items, (e) => [e.id, e.url, e.events.join(','), e.enabled ? 'enabled' : `disabled${e.disabledReason ? `: ${e.disabledReason}` : ''}`], ['id', 'url', 'events', 'state']);
      },
    }),
    create: defineCommand({
      meta: { name: 'create', description: 'Create an endpoint; its signing secret is printed this once' },
      args: {
        ...globalArgs,
        url: { type: 'positional', description: 'where events are POSTed', required: true },
        events: { type: 'string', description: 'comma-separated event names or wildcards (run.*, *)', required: true },
        description: { type: 'string', description: 'what it is for' },
      },
      async run({ args }) {
        const { out, api } = openSession(args, { needKey: true });
        const body = { url: args.url, events: args.events.split(',').map((e) => e.trim()).filter(Boolean), ...(args.description !== undefined ? { description: args.description } : {}) };
        const made = (await api.request<EndpointRecord>('POST', '/api/webhooks', { body })).data;
        printEndpoint(out, made);
        if (!out.json) out.log.warn('keep the secret now: it is not shown again (svc webhooks rotate-secret makes a new one)');
      },
    }),
    delete: defineCommand({
      meta: { name: 'delete', description: 'Delete an endpoint and its delivery log' },
      args: { ...globalArgs, ...idArg },
      async run({ args }) {
        const { out, api } = openSession(args, { needKey: true });
        await api.request('DELETE', `/api/webhooks/${enc(args.id)}`);
        if (out.json) return out.data({ deleted: args.id });
        out.log.success(`webhook ${args.id} deleted`);
      },
    }),
    'rotate-secret': defineCommand({
      meta: { name: 'rotate-secret', description: 'A new signing secret (printed this once); the old one signs too for the overlap' },
      args: { ...globalArgs, ...idArg },
      async run({ args }) {
        const { out, api } = openSession(args, { needKey: true });
        const r = (await api.request<{ id: string; secret: string; previousSecretExpiresAt: string | null }>('POST', `/api/webhooks/${enc(args.id)}/rotate-secret`)).data;
        if (out.json) return out.data(r);
        out.fields([['id', r.id], ['secret', r.secret], ['old secret signs until', r.previousSecretExpiresAt]]);
      },
    }),
    test: defineCommand({
      meta: { name: 'test', description: 'Send a webhook.test event to the endpoint' },
      args: { ...globalArgs, ...idArg },
      async run({ args }) {
        const { out, api } = openSession(args, { needKey: true });
        printDelivery(out, (await api.request<DeliveryRecord>('POST', `/api/webhooks/${enc(args.id)}/test`)).data);
      },
    }),
    deliveries: defineCommand({
      meta: { name: 'deliveries', description: "The endpoint's deliveries, newest first" },
      args: { ...globalArgs, ...limitArg, ...idArg },
      async run({ args }) {
        const { out, api } = openSession(args, { needKey: true });
        const items = await api.get<DeliveryRecord[]>(`/api/webhooks/${enc(args.id)}/deliveries?limit=${readLimit(args.limit)}`);
        printList(
          out,
          items,
          (d) => [d.id, d.event, d.status, d.attempts, d.lastResponseCode ?? '-', d.lastLatencyMs === null ? '-' : `${d.lastLatencyMs} ms`, d.nextAttemptAt ?? '-', d.lastError ?? ''],
          ['id', 'event', 'status', 'attempts', 'code', 'latency', 'next attempt', 'error'],
        );
      },
    }),
    retry: defineCommand({
      meta: { name: 'retry', description: 'Attempt a delivery again now' },
      args: { ...globalArgs, ...idArg, delivery: { type: 'positional', description: 'delivery id (whd_…)', required: true } },
      async run({ args }) {
        const { out, api } = openSession(args, { needKey: true });
        printDelivery(out, (await api.request<DeliveryRecord>('POST', `/api/webhooks/${enc(args.id)}/deliveries/${enc(args.delivery)}/retry`)).data);
      },
    }),
  },
});
