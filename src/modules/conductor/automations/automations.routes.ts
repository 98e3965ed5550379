import { doc } from '../../../shared/route-doc.ts';
import { Hono } from 'hono';
import * as v from 'valibot';
import { Cron } from 'croner';
import { AppError, badRequest, notFound } from '../../../shared/errors.ts';
import { readJson } from '../../../shared/http.ts';
import type { IdentityEnv } from '../identity/index.ts';
import { inTenant, noContent, pageOf, sendList, tenantOf } from '../../crud/index.ts';
import { AutomationView, CreateAutomation, FiringView, MemoryBody, MemoryNote, ParseAnswer, ParseBody, UpdateAutomation } from './automation.schema.ts';
import { pageQueryWith, queryParam } from '../list-query.ts';
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

const ListQuery = pageQueryWith({ q: queryParam('Only automations whose name contains this'), includeDeleted: queryParam('true: deleted automations too') });
const FiringsQuery = pageQueryWith({ automation: queryParam('Only the firings of this automation (id)'), outcome: v.optional(v.picklist(OUTCOMES)) });

export function automationRoutes(deps: AutomationDeps & FiringDeps, opts: { prefix: 'automations' | 'schedules' }): Hono<IdentityEnv> {
  const app = new Hono<IdentityEnv>()
    .get('/', doc({ summary: 'List automations', description: 'The tenant\'s automations, newest first, 200 a page by default (X-Total-Count says how many in all). `q` filters by name; deleted ones are left out unless `includeDeleted=true`.', query: ListQuery, response: v.array(AutomationView) }), async (c) => {
      const page = pageOf(c, LISTS);
      const includeDeleted = c.req.query('includeDeleted') === 'true';
      return sendList(c, page, await listAll(deps, tenantOf(c), { q: c.req.query('q') || undefined, includeDeleted }, page));
    })
    .post('/', doc({ summary: 'Create an automation', description: 'A profile run on a cron schedule (in `timezone`, between `startAt` and `endAt` when given). It starts active; the profile must exist and the name be free.', body: CreateAutomation, response: AutomationView, status: 201, errors: [409] }), async (c) => c.json(await createAutomation(deps, tenantOf(c), await readJson(c, CreateAutomation)), 201))
    .get('/firings', doc({ summary: 'List automation firings', description: 'Every firing of the tenant\'s automations, newest first, with its outcome and run; filter by `automation` id and by `outcome`.', query: FiringsQuery, response: v.array(FiringView) }), async (c) => {
      const page = pageOf(c, LISTS);
      const outcome = c.req.query('outcome');
      if (outcome !== undefined && !v.is(v.picklist(OUTCOMES), outcome)) throw badRequest('outcome: expected ok, failed or skipped');
      const filter = { automation: c.req.query('automation') || undefined, outcome: outcome as (typeof OUTCOMES)[number] | undefined };
      return sendList(c, page, await inTenant(deps.db, c, (tx) => listFirings(tx, filter, page)));
    })
    // the automation_memory tool: a firing's run (run token `run:<runId>`) rewrites its own automation's note
    .put('/self/memory', doc({ summary: 'Rewrite the firing automation\'s memory note', description: 'For a run started by an automation, with its run token: replaces the note its automation keeps between firings (at most 8 KB).', body: MemoryBody, response: MemoryNote, errors: [404, 413] }), async (c) => {
      const { body } = await readJson(c, MemoryBody);
      const p = c.get('principal');
      const runId = p.authKind === 'run_token' && p.subject?.startsWith('run:') ? p.subject.slice(4) : undefined;
      const id = runId && (await withTenant(deps.db, p.tenantId, (tx) => automationOfRun(tx, runId)));
      if (!id) throw notFound('this run is no automation firing, so it has no memory note');
      return c.json(await putMemory(deps, p.tenantId, id, body, `run:${runId}`));
    })
    .get('/:id', doc({ summary: 'Get an automation', description: 'One automation by id, deleted ones included.', response: AutomationView }), async (c) => c.json(toAutomation(await getOne(deps, tenantOf(c), c.req.param('id')))))
    .put('/:id', doc({ summary: 'Update an automation', description: 'Changes the fields sent; the rest keep their value. An automation is not renamed; a disabled one answers 409 until started; an active one gets its next run recomputed.', body: UpdateAutomation, response: AutomationView, errors: [409] }), async (c) => c.json(await updateOne(deps, tenantOf(c), c.req.param('id'), await readJson(c, UpdateAutomation))))
    .delete('/:id', doc({ summary: 'Delete an automation', description: 'Stops it and hides it from lists; a firing in flight finishes and its outcome is still recorded.', status: 204 }), async (c) => {
      await deleteAutomation(deps, tenantOf(c), c.req.param('id'));
      return noContent(c);
    })
    .post('/:id/start', doc({ summary: 'Start an automation', description: 'Active again, the next run from now (missed slots are not caught up), failures cleared. 409 once its window has ended.', response: AutomationView, errors: [409] }), async (c) => c.json(await startAutomation(deps, tenantOf(c), c.req.param('id'))))
    .post('/:id/stop', doc({ summary: 'Stop an automation', description: 'No more scheduled firings until it is started again; a firing in flight finishes.', response: AutomationView }), async (c) => c.json(await stopAutomation(deps, tenantOf(c), c.req.param('id'))))
    .post('/:id/run', doc({ summary: 'Fire an automation now', description: 'One firing at once, whatever its status; its schedule is left alone. A run that cannot start (no credit, a busy session) is the firing\'s failure, recorded in the answer.', response: FiringView, status: 202 }), async (c) => c.json(await fireNow(deps, tenantOf(c), c.req.param('id')), 202))
    .get('/:id/memory', doc({ summary: 'Read an automation\'s memory note', description: 'The note the automation\'s runs keep between firings; `{"body": ""}` without `updatedAt` until first written.', response: MemoryNote }), async (c) => c.json(await getMemory(deps, tenantOf(c), c.req.param('id'))))
    .put('/:id/memory', doc({ summary: 'Rewrite an automation\'s memory note', description: 'Replaces the note (at most 8 KB of UTF-8); every write is kept as a version of the note\'s memory entry.', body: MemoryBody, response: MemoryNote, errors: [413] }), async (c) =>
      c.json(await putMemory(deps, tenantOf(c), c.req.param('id'), (await readJson(c, MemoryBody)).body, memoryActorOf(c.get('principal')))),
    );
  if (opts.prefix === 'schedules') {
    app.post('/parse', doc({ summary: 'Read a schedule written in words', description: 'Turns plain language ("every 15 minutes", "weekdays at 08:30") into a cron expression, with the next five runs in `timezone`. 422 when the text says no schedule it knows.', body: ParseBody, response: ParseAnswer, errors: [422] }), async (c) => {
      const body = await readJson(c, ParseBody);
      const timezone = body.timezone ?? 'UTC';
      if (!validTimezone(timezone)) throw badRequest(`timezone: unknown IANA timezone: ${timezone}`);
      const parsed = parseCadence(body.text);
      if (!parsed) throw new AppError(422, `text: cannot read a schedule from ${JSON.stringify(body.text)}; try e.g. "every 15 minutes", "weekdays at 08:30"`);
      const nextRuns = new Cron(parsed.cron, { timezone, paused: true }).nextRuns(5).map((d) => d.toISOString());
      return c.json({ cron: parsed.cron, timezone, description: parsed.description, nextRuns });
    });
  }
  if (opts.prefix === 'automations') app.post('/:id/pause', doc({ summary: 'Stop an automation (old name)', description: 'The same as POST /api/automations/{id}/stop, kept for older clients.', response: AutomationView }), async (c) => c.json(await stopAutomation(deps, tenantOf(c), c.req.param('id'))));
  return app;
}
