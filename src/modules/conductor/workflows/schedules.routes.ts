import { Hono } from 'hono';
import { readJson } from '../../../shared/http.ts';
import { doc } from '../../../shared/route-doc.ts';
import { noContent, pageOf, sendList, tenantOf } from '../../crud/index.ts';
import type { IdentityEnv } from '../identity/index.ts';
import type { EngineDeps } from './engine.ts';
import { createSchedule, deleteOneSchedule, getOneSchedule, listAllSchedules, setScheduleActive } from './schedules.service.ts';
import { ScheduleBody } from './workflow.schema.ts';
import { WORKFLOW_LISTS } from './workflows.routes.ts';

/** `/api/workflows/schedules`: create (201), list, get, pause, resume, delete (204). */
export function scheduleRoutes(deps: EngineDeps): Hono<IdentityEnv> {
  return new Hono<IdentityEnv>()
    .post('/', doc({ body: ScheduleBody }), async (c) => c.json({ workflowSchedule: await createSchedule(deps, tenantOf(c), await readJson(c, ScheduleBody)) }, 201))
    .get('/', async (c) => {
      const page = pageOf(c, WORKFLOW_LISTS);
      return sendList(c, page, await listAllSchedules(deps, tenantOf(c), page));
    })
    .get('/:id', async (c) => c.json({ workflowSchedule: await getOneSchedule(deps, tenantOf(c), c.req.param('id')) }))
    .post('/:id/pause', async (c) => c.json({ workflowSchedule: await setScheduleActive(deps, tenantOf(c), c.req.param('id'), false) }))
    .post('/:id/resume', async (c) => c.json({ workflowSchedule: await setScheduleActive(deps, tenantOf(c), c.req.param('id'), true) }))
    .delete('/:id', async (c) => {
      await deleteOneSchedule(deps, tenantOf(c), c.req.param('id'));
      return noContent(c);
    });
}
