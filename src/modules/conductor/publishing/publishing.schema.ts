import * as v from 'valibot';
import { readOnlyFields } from '../../../shared/strict-body.ts';

/** Bodies of the publishing routes (seed 000 "Publishing"): every publish field is optional. */
export const SLUG_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const Slug = v.pipe(v.string(), v.regex(SLUG_PATTERN, 'lowercase letters, digits and inner dashes, at most 63'), v.check((s) => !s.includes('--'), 'no double dashes'));
const Origin = v.pipe(v.string(), v.maxLength(200), v.check((o) => o === '*' || /^https?:\/\/[^/\s]+$/.test(o), 'an origin like https://example.com, or *'));

const Settings = {
  visibility: v.optional(v.picklist(['private', 'org', 'public'])),
  authMode: v.optional(v.picklist(['api_key', 'jwt'])),
  allowedOrigins: v.optional(v.pipe(v.array(Origin), v.maxLength(50))),
  rateLimitRpm: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(100_000))),
  syncMaxDurationSeconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(270))),
  conversationTtlDays: v.optional(v.nullable(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(36_500)))),
  exposeToolEvents: v.optional(v.boolean()),
  /** Who approves a call to an `ask` tool on the chat endpoint: nobody (`deny`, the default) or the agent's tenant (`owner`). */
  approvals: v.optional(v.picklist(['deny', 'owner'])),
  /** authMode jwt: where end-user tokens' keys are, and the issuer they must carry. */
  jwksUrl: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(500), v.url(), v.regex(/^https?:\/\//, 'an http(s) URL')))),
  jwtIssuer: v.optional(v.nullable(v.pipe(v.string(), v.minLength(1), v.maxLength(500)))),
};

export const PublishBody = v.strictObject({ slug: v.optional(Slug), ...Settings });
export type PublishInput = v.InferOutput<typeof PublishBody>;

export const PatchBody = v.strictObject({
  ...readOnlyFields('id', 'tenantId', 'profileName'),
  ...Settings,
  /** Immutable: accepted only when unchanged (so a client may send back what it read). */
  slug: v.optional(v.string()),
  enabled: v.optional(v.boolean()),
  monthlyCostCapUsdCents: v.optional(v.nullable(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(1_000_000_000)))),
});
export type PatchInput = v.InferOutput<typeof PatchBody>;

export const AgentKeyBody = v.strictObject({
  label: v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(200)),
  expiresAt: v.optional(v.nullable(v.pipe(v.string(), v.isoTimestamp()))),
});

/** The kebab-case of a profile name: the default slug. */
export function kebab(name: string): string {
  const s = name
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63)
    .replace(/-+$/, '');
  return s || 'agent';
}
