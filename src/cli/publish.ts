import { defineCommand } from 'citty';
import { globalArgs } from './args.ts';
import { openSession, type Session } from './client/session.ts';

export interface Published {
  slug: string;
  profileName: string;
  visibility: string;
  rateLimitRpm: number;
  enabled: boolean;
}

/** Where the agent answers: the gateway (SVC_GATEWAY_URL or the context's), else the API's own origin, at /chat/<slug>. */
export const chatUrl = (session: Pick<Session, 'ctx'>, slug: string) => `${(session.ctx.gatewayUrl ?? session.ctx.apiUrl).replace(/\/+$/, '')}/chat/${encodeURIComponent(slug)}`;

export const showPublished = (out: Session['out'], p: Published, url: string) =>
  out.fields([
    ['profile', p.profileName],
    ['slug', p.slug],
    ['visibility', p.visibility],
    ['rate limit (rpm)', p.rateLimitRpm],
    ['enabled', p.enabled],
    // a public agent's URL is also its chat page; the others take an agent key (svc agent-keys create)
    ['url', p.visibility === 'public' ? `${url} (also a chat page in a browser)` : `${url} (POST, with an agent key: svc agent-keys create ${p.profileName} --label <what for>)`],
  ]);

/** `svc publish <profile>`: publishes a profile as a chat endpoint at /chat/<slug> (every setting optional). */
export default defineCommand({
  meta: { name: 'publish', description: 'Publish a profile as a chat endpoint' },
  args: {
    ...globalArgs,
    profile: { type: 'positional', description: 'Profile name', required: true },
    slug: { type: 'string', description: 'URL slug (default: the kebab-cased profile name)' },
    visibility: { type: 'string', description: 'private, org or public (default private)' },
    'rate-limit-rpm': { type: 'string', description: 'Requests per minute per key (default 60; 0: no limit)' },
    'allowed-origin': { type: 'string', description: 'Browser origins allowed to call it, comma-separated (* for any)' },
    approvals: { type: 'string', description: 'Who approves calls to its ask tools: deny (default; end users cannot) or owner (the run waits for you)' },
  },
  async run({ args }) {
    const session = openSession(args, { needKey: true });
    const { out, api } = session;
    const body: Record<string, unknown> = {};
    if (args.slug) body.slug = args.slug;
    if (args.visibility) body.visibility = args.visibility;
    if (args['rate-limit-rpm'] !== undefined) body.rateLimitRpm = Number(args['rate-limit-rpm']);
    if (args.approvals) body.approvals = args.approvals;
    if (args['allowed-origin']) body.allowedOrigins = String(args['allowed-origin']).split(',').map((s) => s.trim()).filter(Boolean);
    const { data } = await api.request<Published>('POST', `/api/profiles/${encodeURIComponent(args.profile)}/publish`, { body });
    const url = chatUrl(session, data.slug);
    if (out.json) return out.data({ ...data, url });
    showPublished(out, data, url);
  },
});
