import { Hono } from 'hono';
import type { Feature } from '../feature.ts';
import type { IdentityEnv } from '../identity/index.ts';
import { skillRoutes } from './skills.routes.ts';

/** `/api/skills`. */
export const skillsFeature: Feature = ({ db }) => ({ api: new Hono<IdentityEnv>().route('/skills', skillRoutes({ db })) });
