import { Hono } from 'hono';
import type { Feature } from '../feature.ts';
import type { IdentityEnv } from '../identity/index.ts';
import { loadPlatformSkills, PLATFORM_SKILLS_DIR, seedPlatformSkills, type PlatformSkill } from './platform.ts';
import { skillRoutes } from './skills.routes.ts';

/**
 * `/api/skills` (catalog and staged import). The platform skills are seeded into every tenant at start, and into a
 * tenant created since on its first `/api/skills` call (once per tenant and process; tombstones are honoured).
 */
export const skillsFeature: Feature = ({ db, log }) => {
  const skillLog = log.child('skills');
  let platform: PlatformSkill[] = [];
  const seeded = new Set<string>();
  const api = new Hono<IdentityEnv>();
  api.use('/skills/*', async (c, next) => {
    const tenantId = c.get('principal').tenantId;
    if (platform.length && !seeded.has(tenantId)) {
      await seedPlatformSkills(db, platform, [tenantId]);
      seeded.add(tenantId);
    }
    await next();
  });
  api.route('/skills', skillRoutes({ db }));
  return {
    api,
    async start() {
      platform = await loadPlatformSkills(PLATFORM_SKILLS_DIR, skillLog);
      const written = await seedPlatformSkills(db, platform);
      if (written) skillLog.info('platform skills seeded', { written });
    },
  };
};
