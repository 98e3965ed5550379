import { doc } from '../../../shared/route-doc.ts';
import { Hono } from 'hono';
import * as v from 'valibot';
import { Cron } from 'croner';
import { AppError, badRequest, notFound } from '../../../shared/errors.ts';
import { readJson } from '../../../shared/http.ts';
import type { IdentityEnv } from '../identity/index.ts';
import { inTenant, noContent, pageOf, sendList, tenantOf } from '../../crud/index.ts';
import { CreateAutomation, MemoryBody, ParseBody, UpdateAutomation } from './automation.schema.ts';
import { parseCadence } from './cadence.parser.ts';
import { validTimezone } from './schedule.ts';
import { toAutomation } from './automations.repo.ts';
import { automationOfRun, listFirings } from './automations.repo.ts';
import {
  createAutomation,
  deleteAutomation,
  getMemory,
  getOne,
  listAll,
  putMemory,
  startAutomation,
  stopAutomation,
  updateOne,
  type AutomationDeps,
} from './automations.service.ts';
import { fireNow, type FiringDeps } from './firing.service.ts';
import { withTenant } from '../../../db/index.ts';
import { memoryActorOf } from '../memory/index.ts';

/**
 * `/api/automations/*` and its alias `/api/schedules/*` (seed 000 "Automations"): the same handlers, except `pause`
 * (a deprecated alias of stop) only under /api/automations. Lists page with `limit` (default 200) and `offset` and
 * always answer X-Total-Count. `parse` (plain language to cron) only under /api/schedules.
 */
const OUTCOMES = ['ok', 'failed', 'skipped'] as const;

const LISTS = { defaultLimit: 200 };

export function automationRoutes(deps: AutomationDeps & FiringDeps, opts: { prefix: 'automations' | 'schedules' }): Hono<IdentityEnv> {
  const app = new Hono<IdentityEnv>()
    .get('/', async (c) => {
      const page = pageOf(c, LISTS);
      const includeDeleted = c.req.query('includeDeleted') === 'true';
      return sendList(c, page, await listAll(deps, tenantOf(c), { q: c.req.query('q') || undefined, includeDeleted }, page));
    })
    .post('/', doc({ body: CreateAutomation }), async (c) => c.json(await createAutomation(deps, tenantOf(c), await readJson(c, CreateAutomation)), 201))
    .get('/firings', async (c) => {
      const page = pageOf(c, LISTS);
      const outcome = c.req.query('outcome');
      if (outcome !== undefined && !v.is(v.picklist(OUTCOMES), outcome)) throw badRequest('outcome: expected ok, failed or skipped');
      const filter = { automation: c.req.query('automation') || undefined, outcome: outcome as (typeof OUTCOMES)[number] | undefined };
      return sendList(c, page, await inTenant(deps.db, c, (tx) => listFirings(tx, filter, page)));
    })
    // the automation_memory tool: a firing's run (run token `run:<runId>`) rewrites its own automation's note
    .put('/self/memory', doc({ body: MemoryBody }), async (c) => {
      const { body } = await readJson(c, MemoryBody);
      const p = c.get('principal');
      const runId = p.authKind === 'run_token' && p.subject?.startsWith('run:') ? p.subject.slice(4) : undefined;
      const id = runId && (await withTenant(deps.db, p.tenantId, (tx) => automationOfRun(tx, runId)));
      if (!id) throw notFound('this run is no automation firing, so it has no memory note');
      return c.json(await putMemory(deps, p.tenantId, id, body, `run:${runId}`));
    })
    .get('/:id', async (c) => c.json(toAutomation(await getOne(deps, tenantOf(c), c.req.param('id')))))
    .put('/:id', doc({ body: UpdateAutomation }), async (c) => c.json(await updateOne(deps, tenantOf(c), c.req.param('id'), await readJson(c, UpdateAutomation))))
    .delete('/:id', async (c) => {
      await deleteAutomation(deps, tenantOf(c), c.req.param('id'));
      return noContent(c);
    })
    .post('/:id/start', async (c) => c.json(await startAutomation(deps, tenantOf(c), c.req.param('id'))))
    .post('/:id/stop', async (c) => c.json(await stopAutomation(deps, tenantOf(c), c.req.param('id'))))
    .post('/:id/run', async (c) => c.json(await fireNow(deps, tenantOf(c), c.req.param('id')), 202))
    .get('/:id/memory', async (c) => c.json(await getMemory(deps, tenantOf(c), c.req.param('id'))))
    .put('/:id/memory', doc({ body: MemoryBody }), async (c) =>
      c.json(await putMemory(deps, tenantOf(c), c.req.param('id'), (await readJson(c, MemoryBody)).body, memoryActorOf(c.get('principal')))),
    );
  if (opts.prefix === 'schedules') {
    app.post('/parse', doc({ body: ParseBody }), async (c) => {
      const body = await readJson(c, ParseBody);
      const timezone = body.timezone ?? 'UTC';
      if (!validTimezone(timezone)) throw badRequest(`timezone: unknown IANA timezone: ${timezone}`);
      const parsed = parseCadence(body.text);
      if (!parsed) throw new AppError(422, `text: cannot read a schedule from ${JSON.stringify(body.text)}; try e.g. "every 15 minutes", "weekdays at 08:30"`);
      const nextRuns = new Cron(parsed.cron, { timezone, paused: true }).nextRuns(5).map((d) => d.toISOString());
      return c.json({ cron: parsed.cron, timezone, description: parsed.description, nextRuns });
    });
  }
  if (opts.prefix === 'automations') app.post('/:id/pause', async (c) => c.json(await stopAutomation(deps, tenantOf(c), c.req.param('id'))));
  return app;
}
