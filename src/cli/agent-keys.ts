import { defineCommand } from 'citty';
import { globalArgs } from './args.ts';
import { openSession } from './client/session.ts';
import { agentKeyId } from './client/names.ts';

interface AgentKey {
  id: string;
  label: string;
  prefix: string;
  status: string;
  createdAt: string;
  expiresAt: string | null;
  token?: string;
}

const profileArg = { profile: { type: 'positional', description: 'Profile name', required: true } } as const;
const keysOf = (profile: string) => `/api/profiles/${encodeURIComponent(profile)}/keys`;

/** `svc agent-keys list|create|revoke <profile>`: the keys (pk_…) that open a published agent's chat endpoint. */
export default defineCommand({
  meta: { name: 'agent-keys', description: "Keys for a published agent's chat endpoint" },
  subCommands: {
    list: defineCommand({
      meta: { name: 'list', description: 'List agent keys (metadata only)' },
      args: { ...globalArgs, ...profileArg },
      async run({ args }) {
        const { out, api } = openSession(args, { needKey: true });
        const keys = await api.get<AgentKey[]>(keysOf(args.profile));
        if (out.json) return out.data(keys);
        out.rows([['id', 'label', 'prefix', 'status', 'created', 'expires'], ...keys.map((k) => [k.id, k.label, k.prefix, k.status, k.createdAt, k.expiresAt])]);
      },
    }),
    create: defineCommand({
      meta: { name: 'create', description: 'Create an agent key (the token is shown once)' },
      args: { ...globalArgs, ...profileArg, label: { type: 'string', description: 'what the key is for, shown in lists, e.g. website', required: true }, 'expires-at': { type: 'string', description: 'ISO 8601 expiry' } },
      async run({ args }) {
        const { out, api } = openSession(args, { needKey: true });
        const { data } = await api.request<AgentKey>('POST', keysOf(args.profile), { body: { label: args.label, ...(args['expires-at'] ? { expiresAt: args['expires-at'] } : {}) } });
        if (out.json) return out.data(data);
        out.fields([['id', data.id], ['label', data.label], ['token', data.token]]);
        out.log.warn('the token is shown only now: keep it somewhere safe');
      },
    }),
    revoke: defineCommand({
      meta: { name: 'revoke', description: 'Revoke an agent key at once' },
      args: { ...globalArgs, ...profileArg, id: { type: 'positional', description: 'the key: its id, or its label', required: true } },
      async run({ args }) {
        const { out, api } = openSession(args, { needKey: true });
        const id = await agentKeyId(api, args.profile, args.id);
        await api.request('DELETE', `${keysOf(args.profile)}/${encodeURIComponent(id)}`);
        if (out.json) return out.data({ id, revoked: true });
        out.text(`revoked ${id}`);
      },
    }),
  },
});
