import { defineCommand } from 'citty';
import { globalArgs, limitArg } from './args.ts';
import { printList, readLimit } from './client/list.ts';
import type { Output } from './client/output.ts';
import { openSession } from './client/session.ts';
import { automationId } from './client/names.ts';

/** `svc automations list|create|start|stop|run|firings|memory`: /api/automations from the command line. */
interface AutomationRecord {
  id: string;
  name: string;
  profile: string;
  cron: string;
  timezone: string;
  status: string;
  nextRunAt: string | null;
  lastFiredAt: string | null;
}
interface FiringRecord {
  id: string;
  automationId: string;
  scheduledFor: string;
  outcome: string | null;
  runId: string | null;
  error: string | null;
}

const idArg = { id: { type: 'positional', description: 'the automation: its name or id', required: true } } as const;
const enc = encodeURIComponent;

function printAutomation(out: Output, a: AutomationRecord): void {
  if (out.json) return out.data(a);
  out.fields([
    ['id', a.id],
    ['name', a.name],
    ['profile', a.profile],
    ['cron', `${a.cron} (${a.timezone})`],
    ['status', a.status],
    ['nextRunAt', a.nextRunAt],
    ['lastFiredAt', a.lastFiredAt],
  ]);
}

function printFiring(out: Output, f: FiringRecord): void {
  if (out.json) return out.data(f);
  out.fields([
    ['id', f.id],
    ['automation', f.automationId],
    ['scheduledFor', f.scheduledFor],
    ['outcome', f.outcome ?? 'running'],
    ['run', f.runId],
    ['error', f.error],
  ]);
}

const transition = (name: 'start' | 'stop', description: string) =>
  defineCommand({
    meta: { name, description },
    args: { ...globalArgs, ...idArg },
    async run({ args }) {
      const { out, api } = openSession(args, { needKey: true });
      printAutomation(out, (await api.request<AutomationRecord>('POST', `/api/automations/${enc(await automationId(api, args.id))}/${name}`)).data);
    },
  });

export default defineCommand({
  meta: { name: 'automations', description: 'Profiles run on a schedule' },
  subCommands: {
    list: defineCommand({
      meta: { name: 'list', description: 'List automations' },
      args: { ...globalArgs, ...limitArg, q: { type: 'string', description: 'only automations whose name, profile or prompt contains this' } },
      async run({ args }) {
        const { out, api } = openSession(args, { needKey: true });
        const items = await api.get<AutomationRecord[]>(`/api/automations?limit=${readLimit(args.limit)}${args.q ? `&q=${enc(args.q)}` : ''}`);
        printList(out, items, (a) => [a.id, a.name, a.profile, a.cron, a.timezone, a.status, a.nextRunAt ?? '-'], ['id', 'name', 'profile', 'cron', 'timezone', 'status', 'next run']);
      },
    }),
    create: defineCommand({
      meta: { name: 'create', description: 'Create an automation (active at once)' },
      args: {
        ...globalArgs,
        name: { type: 'positional', description: 'its name', required: true },
        profile: { type: 'string', description: 'the profile it runs', required: true },
        cron: { type: 'string', description: 'cron in 5 fields (6 with seconds)', required: true },
        prompt: { type: 'string', description: 'the prompt of every firing' },
        timezone: { type: 'string', description: 'IANA timezone (default UTC)' },
        persistent: { type: 'boolean', description: 'keep one session across firings' },
      },
      async run({ args }) {
        const { out, api } = openSession(args, { needKey: true });
        const body = {
          name: args.name,
          profile: args.profile,
          cron: args.cron,
          ...(args.prompt !== undefined ? { prompt: args.prompt } : {}),
          ...(args.timezone !== undefined ? { timezone: args.timezone } : {}),
          ...(args.persistent ? { sessionMode: 'persistent' } : {}),
        };
        printAutomation(out, (await api.request<AutomationRecord>('POST', '/api/automations', { body })).data);
      },
    }),
    start: transition('start', 'Activate an automation (next run from now)'),
    stop: transition('stop', 'Stop an automation'),
    run: defineCommand({
      meta: { name: 'run', description: 'Fire one slot now (any status)' },
      args: { ...globalArgs, ...idArg },
      async run({ args }) {
        const { out, api } = openSession(args, { needKey: true });
        printFiring(out, (await api.request<FiringRecord>('POST', `/api/automations/${enc(await automationId(api, args.id))}/run`)).data);
      },
    }),
    firings: defineCommand({
      meta: { name: 'firings', description: 'List firings, newest first' },
      args: { ...globalArgs, ...limitArg, id: { type: 'positional', description: 'only this automation (its name or id)', required: false }, outcome: { type: 'string', description: 'ok, failed or skipped' } },
      async run({ args }) {
        const { out, api } = openSession(args, { needKey: true });
        const q = [`limit=${readLimit(args.limit)}`, ...(args.id ? [`automation=${enc(await automationId(api, args.id))}`] : []), ...(args.outcome ? [`outcome=${enc(args.outcome)}`] : [])].join('&');
        const items = await api.get<FiringRecord[]>(`/api/automations/firings?${q}`);
        printList(out, items, (f) => [f.id, f.automationId, f.scheduledFor, f.outcome ?? 'running', f.runId ?? '-', f.error ?? ''], ['id', 'automation', 'scheduled for', 'outcome', 'run', 'error']);
      },
    }),
    memory: defineCommand({
      meta: { name: 'memory', description: 'Show the memory note (--set <text> replaces it; --set "" clears it)' },
      args: { ...globalArgs, ...idArg, set: { type: 'string', description: 'the new note' } },
      async run({ args }) {
        const { out, api } = openSession(args, { needKey: true });
        const path = `/api/automations/${enc(await automationId(api, args.id))}/memory`;
        const note = args.set !== undefined ? (await api.request<{ body: string; updatedAt?: string }>('PUT', path, { body: { body: args.set } })).data : await api.get<{ body: string; updatedAt?: string }>(path);
        if (out.json) return out.data(note);
        out.fields([['updatedAt', note.updatedAt ?? null], ['body', note.body]]);
      },
    }),
  },
});
