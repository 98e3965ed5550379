import { Hono } from 'hono';
import { readJson } from '../../../shared/http.ts';
import { doc } from '../../../shared/route-doc.ts';
import { noContent, pageOf, sendList, tenantOf } from '../../crud/index.ts';
import type { IdentityEnv } from '../identity/index.ts';
import type { EngineDeps } from './engine.ts';
import { createSchedule, deleteOneSchedule, getOneSchedule, listAllSchedules, setScheduleActive } from './schedules.service.ts';
import * as v from 'valibot';
import { ScheduleAnswer, ScheduleBody, ScheduleView, WorkflowPageQuery } from './workflow.schema.ts';
import { WORKFLOW_LISTS } from './workflows.routes.ts';

/** `/api/workflows/schedules`: create (201), list, get, pause, resume, delete (204). */
export function scheduleRoutes(deps: EngineDeps): Hono<IdentityEnv> {
  return new Hono<IdentityEnv>()
    .post('/', doc({ summary: 'Create a workflow schedule', description: 'Starts a run of a workflow definition on a cron schedule (in `timezone`, UTC by default). It starts active.', body: ScheduleBody, response: ScheduleAnswer, status: 201 }), async (c) => c.json({ workflowSchedule: await createSchedule(deps, tenantOf(c), await readJson(c, ScheduleBody)) }, 201))
    .get('/', doc({ summary: 'List workflow schedules', description: 'The tenant\'s workflow schedules, 200 a page by default (and at most), with X-Total-Count.', query: WorkflowPageQuery, response: v.array(ScheduleView) }), async (c) => {
      const page = pageOf(c, WORKFLOW_LISTS);
      return sendList(c, page, await listAllSchedules(deps, tenantOf(c), page));
    })
    .get('/:id', doc({ summary: 'Get a workflow schedule', description: 'One schedule with its next and last firing.', response: ScheduleAnswer }), async (c) => c.json({ workflowSchedule: await getOneSchedule(deps, tenantOf(c), c.req.param('id')) }))
    .post('/:id/pause', doc({ summary: 'Pause a workflow schedule', description: 'No more runs until it is resumed.', response: ScheduleAnswer }), async (c) => c.json({ workflowSchedule: await setScheduleActive(deps, tenantOf(c), c.req.param('id'), false) }))
    .post('/:id/resume', doc({ summary: 'Resume a workflow schedule', description: 'Active again, the next run from now.', response: ScheduleAnswer }), async (c) => c.json({ workflowSchedule: await setScheduleActive(deps, tenantOf(c), c.req.param('id'), true) }))
    .delete('/:id', doc({ summary: 'Delete a workflow schedule', description: 'No more runs; runs it started stay.', status: 204 }), async (c) => {
      await deleteOneSchedule(deps, tenantOf(c), c.req.param('id'));
      return noContent(c);
    });
}
