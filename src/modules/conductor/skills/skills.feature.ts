import { Hono } from 'hono';
import type { Feature } from '../feature.ts';
import type { IdentityEnv } from '../identity/index.ts';
import { loadPlatformSkills, PLATFORM_SKILLS_DIR, seedPlatformSkills } from './platform.ts';
import { skillRoutes } from './skills.routes.ts';

/** `/api/skills` (catalog and staged import); at start, the platform skills are seeded into every tenant. */
export const skillsFeature: Feature = ({ db, log }) => {
  const skillLog = log.child('skills');
  return {
    api: new Hono<IdentityEnv>().route('/skills', skillRoutes({ db })),
    async start() {
      const written = await seedPlatformSkills(db, await loadPlatformSkills(PLATFORM_SKILLS_DIR, skillLog));
      if (written) skillLog.info('platform skills seeded', { written });
    },
  };
};
