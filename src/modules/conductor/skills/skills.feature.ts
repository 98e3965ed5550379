import { Hono } from 'hono';
import type { Feature } from '../feature.ts';
import type { IdentityEnv } from '../identity/index.ts';
import { withOperator } from '../../../db/index.ts';
import { loadPlatformSkills, PLATFORM_SKILLS_DIR, platformFingerprint, seedPlatformSkills, type PlatformSkill } from './platform.ts';
import { tenantsToSeed } from './skills.repo.ts';
import { skillRoutes } from './skills.routes.ts';

/**
 * `/api/skills` (catalog and staged import). The platform skills are seeded at start into every tenant that does not
 * hold them yet (the tenant row keeps their fingerprint: a restart with the same skills parses none and writes
 * nothing), and into a tenant created since on its first `/api/skills` call (tombstones are honoured).
 */
export const skillsFeature: Feature = ({ db, log }) => {
  const skillLog = log.child('skills');
  let fingerprint: Promise<string> | undefined;
  let platform: Promise<PlatformSkill[]> | undefined;
  const seeded = new Set<string>();
  /** Seeds the live tenants (of `among`) last seeded with other skills; answers how many skills were written. */
  const seed = async (among?: readonly string[]) => {
    const fp = await (fingerprint ??= platformFingerprint(PLATFORM_SKILLS_DIR));
    const stale = await withOperator(db, (tx) => tenantsToSeed(tx, fp, among));
    if (stale.length === 0) return 0;
    return seedPlatformSkills(db, await (platform ??= loadPlatformSkills(PLATFORM_SKILLS_DIR, skillLog)), stale, fp);
  };
  const api = new Hono<IdentityEnv>();
  api.use('/skills/*', async (c, next) => {
    const tenantId = c.get('principal').tenantId;
    if (!seeded.has(tenantId)) {
      await seed([tenantId]);
      seeded.add(tenantId);
    }
    await next();
  });
  api.route('/skills', skillRoutes({ db }));
  return {
    api,
    async start() {
      const written = await seed();
      if (written) skillLog.info('platform skills seeded', { written });
    },
  };
};
