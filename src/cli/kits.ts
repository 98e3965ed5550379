import { defineCommand } from 'citty';
import { globalArgs } from './args.ts';
import { usageError } from './client/exit.ts';
import { printList } from './client/list.ts';
import { openSession } from './client/session.ts';

/** `svc kits list|show|copy`: kits (`/api/templates`), read and copied into the current tenant. */
interface KitSummary {
  id: string;
  slug: string;
  label: string;
  kind: string;
  version: number;
  authorHandle: string;
  description: string;
  counts: { profiles: number; skills: number; automations: number };
  manifest?: { stripped: string[] };
}
interface PlanItem {
  kind: string;
  name: string;
  status: string;
  targetName: string;
}

const enc = encodeURIComponent;
const orgArg = { org: { type: 'string', description: 'the tenant handle that authored the kit (when a slug is shared)', valueHint: 'handle' } } as const;
const query = (args: { org?: string }, extra: Record<string, string | undefined> = {}) => {
  const q = new URLSearchParams(Object.entries({ org: args.org, ...extra }).filter((e): e is [string, string] => !!e[1]));
  return q.size ? `?${q}` : '';
};

export default defineCommand({
  meta: { name: 'kits', description: 'Kits: shareable snapshots of pools, agents and automations' },
  subCommands: {
    list: defineCommand({
      meta: { name: 'list', description: 'List the kits this tenant saved (or copied, with --copied)' },
      args: { ...globalArgs, copied: { type: 'boolean', description: 'the kits this tenant copied' } },
      async run({ args }) {
        const { out, api } = openSession(args, { needKey: true });
        const items = await api.get<KitSummary[]>(`/api/templates?scope=${args.copied ? 'copied' : 'saved'}`);
        printList(out, items, (k) => [k.slug, k.id, k.kind, `v${k.version}`, k.authorHandle, k.label], ['slug', 'id', 'kind', 'version', 'author', 'label']);
      },
    }),
    show: defineCommand({
      meta: { name: 'show', description: 'Show a kit by slug or id (kit-…)' },
      args: { ...globalArgs, ...orgArg, kit: { type: 'positional', description: 'slug or kit id', required: true } },
      async run({ args }) {
        const { out, api } = openSession(args, { needKey: true });
        const k = await api.get<KitSummary>(args.kit.startsWith('kit-') ? `/api/kits/${enc(args.kit)}` : `/api/templates/${enc(args.kit)}${query(args)}`);
        if (out.json) return out.data(k);
        out.fields([
          ['slug', k.slug],
          ['id', k.id],
          ['label', k.label],
          ['kind', k.kind],
          ['version', k.version],
          ['author', k.authorHandle],
          ['contents', `${k.counts.profiles} profiles, ${k.counts.skills} skills, ${k.counts.automations} automations`],
          ['to fill in', k.manifest?.stripped.join(', ') || null],
        ]);
      },
    }),
    copy: defineCommand({
      meta: { name: 'copy', description: 'Copy a kit into this tenant (shows the copy plan; automations arrive stopped)' },
      args: { ...globalArgs, ...orgArg, slug: { type: 'positional', description: 'the kit slug', required: true }, target: { type: 'string', description: 'name of the new pool, agent or automation', valueHint: 'name' } },
      async run({ args }) {
        const { out, api } = openSession(args, { needKey: true });
        if (args.slug.startsWith('kit-')) throw usageError('kits copy: give the slug (see `svc kits show <id>`), with --org when it is shared');
        const plan = await api.get<{ assets: PlanItem[] }>(`/api/templates/${enc(args.slug)}/copy-plan${query(args, { targetName: args.target })}`);
        const { data } = await api.request<{ copied: boolean; reason?: string; targetName: string; created?: Array<{ kind: string; name: string }> }>(
          'POST',
          `/api/templates/${enc(args.slug)}/copy${query(args)}`,
          { body: args.target ? { targetName: args.target } : {} },
        );
        if (out.json) return out.data({ plan, ...data });
        out.rows(plan.assets.map((a) => [a.kind, a.name, a.status, a.targetName]), ['kind', 'name', 'status', 'target']);
        if (!data.copied) return void out.log.info(`not copied: ${data.targetName} already exists`);
        out.log.success(`copied into ${data.targetName}: ${data.created!.map((c) => `${c.kind} ${c.name}`).join(', ') || 'nothing new'}`);
      },
    }),
  },
});
