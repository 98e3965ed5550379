import { Hono } from 'hono';
import type { Feature } from '../feature.ts';
import type { IdentityEnv } from '../identity/index.ts';
import { completionsRoutes } from './completions.routes.ts';
import { gatewayRoutes } from './gateway.routes.ts';
import { publishingRoutes } from './publishing.routes.ts';
import { deleteExpiredConversations } from './publishing.repo.ts';
import { withSystem } from '../../../db/index.ts';
import { createJwksCache } from '../identity/index.ts';

export const PURGE_JOB = 'publishing.conversations-purge';

/**
 * Publishing: `/api/published`, `/api/profiles/{name}/publish|published|keys` (published agents and their agent
 * keys), and the public chat gateway at `/chat/{slug}` with its OpenAI Chat Completions face at `/chat/{slug}/v1`.
 */
export const publishingFeature: Feature = ({ db, config, guards, secrets, runs, limiter, jobs, authenticate, tenantFetch }) => {
  const keyDeps = { db, pepper: secrets.pepper };
  const gateway = { ...keyDeps, runs, limiter, keepAliveMs: config.agents.keepAliveMs, chatPublicUrl: config.chatPublicUrl, authenticate, jwks: createJwksCache({ fetch: tenantFetch }) };
  return {
    api: new Hono<IdentityEnv>().route('/', publishingRoutes({ ...keyDeps, chatPublicUrl: config.chatPublicUrl, appEnv: config.env, privateAddresses: config.privateAddresses, guards })),
    public: new Hono().route('/', gatewayRoutes(gateway)).route('/', completionsRoutes(gateway)),
    // conversationTtlDays: expired conversations go hourly, once across replicas
    async start() {
      await jobs.define(PURGE_JOB, async () => ({ purged: await withSystem(db, deleteExpiredConversations) }), { retryLimit: 0 });
      await jobs.schedule(PURGE_JOB, '23 * * * *');
    },
  };
};
