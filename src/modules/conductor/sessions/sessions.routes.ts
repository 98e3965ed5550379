import { Hono } from 'hono';
import * as v from 'valibot';
import { doc, type Documents } from '../../../shared/route-doc.ts';
import { readJson } from '../../../shared/http.ts';
import { withTenant } from '../../../db/index.ts';
import { CallError } from '../../../contracts/runner.client.ts';
import { AppError, notFound } from '../../../shared/errors.ts';
import type { IdentityEnv } from '../identity/index.ts';
import { findOr404, inTenant, pageOf, PageQuery, sendList } from '../../crud/index.ts';
import { RunSummarySchema, SessionSchema } from '../../../contracts/api-resources.ts';
import type { Fleet } from '../runners/fleet.ts';
import { listRunSummaries, type RunDeps } from '../runs/runs.service.ts';
import { getSessionRow, listSessions, toRecord } from './sessions.repo.ts';
import { fanOut } from './fan-out.ts';
import { openNamedSession, shutdownSession } from './sessions.service.ts';
import { groupOf, parseGroup, parseTimeZone, railOf } from './rail.ts';
import type { SessionRecord } from './sessions.repo.ts';
import { runnerLimitsOf } from '../sandbox-limits/index.ts';

/** The body of `POST /api/sessions`. */
export const SessionBody = v.object({ profile: v.pipe(v.string('profile: expected string'), v.minLength(1, 'a profile name')) });

/** `POST /api/sessions`: the session, with its id also as `sessionId`. */
export const SessionCreated = v.object({ sessionId: v.string(), ...SessionSchema.entries });

const VfsLease = v.object({ sessionId: v.string(), allowedMounts: v.pipe(v.array(v.string()), v.description('Mounts the profile allows; empty: all')), allocatedAt: v.string() });
const WorkerLease = v.object({ sessionId: v.string(), substrate: v.string(), workerId: v.string(), runtime: v.string(), state: v.string(), startedAt: v.string() });
const SessionQuery = v.object({
  ...PageQuery.entries,
  q: v.optional(v.pipe(v.string(), v.description('Only sessions whose id or profile contains this text'))),
  profile: v.optional(v.pipe(v.string(), v.description('Only sessions of this profile'))),
  tz: v.optional(v.pipe(v.string(), v.description('IANA time zone the day groups are counted in (default UTC)'))),
});
const RAIL_GROUP = v.picklist(['today', 'yesterday', 'previous_7_days', 'previous_30_days', 'older']);
const Rail = v.object({ timeZone: v.string(), groups: v.array(v.object({ group: RAIL_GROUP, label: v.string(), sessions: v.array(SessionSchema) })) });
const Topology = v.object({
  runners: v.array(
    v.object({
      hash: v.nullable(v.string()),
      url: v.string(),
      healthy: v.boolean(),
      latencyMs: v.nullable(v.number()),
      activeSessions: v.nullable(v.number()),
      error: v.nullable(v.string()),
      capabilities: v.array(v.string()),
      limits: v.nullable(v.record(v.string(), v.unknown())),
    }),
  ),
});

/** Session lists page 200 rows unless told otherwise, and always say X-Total-Count. */
const SESSION_LISTS = { defaultLimit: 200 };

/**
 * `/api/sessions…` (create, list with `q`, `profile` and `group` filters, the rail, get, delete, runs, VFS lease,
 * worker lease), `/api/vfs/leases`, `/api/worker/leases`, `/api/topology` and `/api/profiles/{name}/runs`.
 */
export function sessionRoutes(deps: RunDeps & { fleet: Fleet; fanOutTimeoutMs: number }): Hono<IdentityEnv> {
  const requireRow = (tenantId: string, id: string) => findOr404(withTenant(deps.db, tenantId, (tx) => getSessionRow(tx, id)), `unknown session: ${id}`);
  /** Calls the runner that holds a session; a runner failure is 502, its 404 passes through with its message. */
  const onOwner = async <T>(tenantId: string, id: string, call: (client: NonNullable<ReturnType<Fleet['byUrl']>>['client']) => Promise<T>): Promise<T> => {
    const row = await requireRow(tenantId, id);
    const owner = deps.fleet.byUrl(row.runner_url);
    if (!owner) throw new AppError(502, 'the runner holding the session is not configured');
    try {
      return await call(owner.client);
    } catch (err) {
      if (err instanceof CallError && err.status === 404) throw notFound(err.message.replace(/^runner [A-Z]+ \S+: /, ''));
      throw new AppError(502, `upstream runner failure: ${err instanceof Error ? err.message : String(err)}`);
    }
  };

  return new Hono<IdentityEnv>()
    .post(
      '/sessions',
      doc({
        summary: 'Open a session',
        description: 'Opens an idle session of a profile on a runner, ready for runs (`POST /api/runs` with its `sessionId`). An unknown profile is a 400; no live runner is a 503.',
        body: SessionBody,
        response: SessionCreated,
        status: 201,
        errors: [503],
      }), async (c) => {
      const session = await openNamedSession(deps, c.get('principal').tenantId, (await readJson(c, SessionBody)).profile);
      return c.json({ sessionId: session.id, ...session }, 201);
    })
    .get(
      '/sessions',
      doc({
        summary: 'List sessions',
        description: 'The tenant’s sessions, newest first (200 a page unless `limit` says; X-Total-Count has the full count), filtered by text, profile or day group (the day group filters the page).',
        query: v.object({ ...SessionQuery.entries, group: v.optional(RAIL_GROUP) }),
        response: v.array(SessionSchema),
      }),
      async (c) => {
      const page = pageOf(c, SESSION_LISTS);
      const group = parseGroup(c.req.query('group'));
      const tz = parseTimeZone(c.req.query('tz'));
      const filter = { q: c.req.query('q') || undefined, profile: c.req.query('profile') || undefined };
      const { items, total } = await inTenant(deps.db, c, (tx) => listSessions(tx, filter, page));
      // the group filter applies to the page (seed 000): X-Total-Count still counts the whole list
      const now = new Date();
      return sendList(c, page, { items: group ? items.filter((s) => groupOf(s.lastUsedAt, now, tz) === group) : items, total });
    })
    .get(
      '/sessions/rail',
      doc({ summary: 'Group sessions by day', description: 'The live sessions, most recently used first, grouped for a sidebar (today, yesterday, the previous 7 and 30 days, older) in the given time zone.', query: SessionQuery, response: Rail }),
      async (c) => {
      const page = pageOf(c, SESSION_LISTS);
      const tz = parseTimeZone(c.req.query('tz'));
      const filter = { q: c.req.query('q') || undefined, profile: c.req.query('profile') || undefined, live: true, orderBy: 'last_used_at' as const };
      const { items, total } = await inTenant(deps.db, c, (tx) => listSessions(tx, filter, page));
      c.header('X-Total-Count', String(total));
      return c.json({ timeZone: tz, groups: railOf(items, new Date(), tz) });
    })
    .get('/sessions/:id', doc({ summary: 'Get a session', description: 'The session: its profile, status, run count and last prompt.', response: SessionSchema }), async (c) => c.json(toRecord(await requireRow(c.get('principal').tenantId, c.req.param('id')))))
    .delete('/sessions/:id', doc({ summary: 'Close a session', description: 'Shuts the session down on its runner and releases its workspace; its runs stay readable.', status: 204, errors: [502] }), async (c) => {
      await shutdownSession(deps, c.get('principal').tenantId, c.req.param('id'));
      return c.body(null, 204);
    })
    .get('/sessions/:id/runs', doc({ summary: 'List a session’s runs', description: 'The runs of one session, newest first.', query: PageQuery, response: v.array(RunSummarySchema) }), async (c) => {
      const tenantId = c.get('principal').tenantId;
      await requireRow(tenantId, c.req.param('id'));
      const page = pageOf(c);
      return sendList(c, page, await listRunSummaries(deps, tenantId, { sessionId: c.req.param('id') }, page));
    })
    .get('/sessions/:id/vfs', doc({ summary: 'Get a session’s workspace', description: 'The session’s virtual file system lease on its runner: the mounts its profile allows and when it was allocated.', response: VfsLease, errors: [502] }), async (c) => {
      const tenantId = c.get('principal').tenantId;
      // an unknown session (or another tenant's) has no VFS session either: the seed's one 404 text
      const row = await findOr404(inTenant(deps.db, c, (tx) => getSessionRow(tx, c.req.param('id'))), 'no vfs session');
      return c.json(await onOwner(tenantId, row.id, (r) => r.vfsLease(tenantId, row.id)));
    })
    .get('/sessions/:id/worker', doc({ summary: 'Get a session’s sandbox worker', description: 'The sandbox worker holding the session, for profiles with sandbox workers; 404 when it has none.', response: WorkerLease, errors: [502] }), async (c) => {
      const tenantId = c.get('principal').tenantId;
      const row = await findOr404(inTenant(deps.db, c, (tx) => getSessionRow(tx, c.req.param('id'))), 'no sandbox worker');
      return c.json(await onOwner(tenantId, row.id, (r) => r.workerLease(tenantId, row.id)));
    })
    .get('/profiles/:name/runs', doc({ summary: 'List a profile’s runs', description: 'The runs of one profile, newest first.', query: PageQuery, response: v.array(RunSummarySchema) }), async (c) => {
      const page = pageOf(c);
      return sendList(c, page, await listRunSummaries(deps, c.get('principal').tenantId, { profile: c.req.param('name') }, page));
    })
    .get('/vfs/leases', doc({ summary: 'List workspaces', description: 'The virtual file system lease of every session of the tenant, across the runners.', response: v.array(VfsLease) }), async (c) => {
      const { items } = await fanOut(deps.fleet, deps.fanOutTimeoutMs, (client, signal) => client.vfsLeases(c.get('principal').tenantId, signal));
      return c.json(items);
    })
    .get(
      '/worker/leases',
      doc({ summary: 'List sandbox workers', description: 'The tenant’s sandbox workers across the runners, by session; X-Partial-Results says a runner did not answer in time.', query: PageQuery, response: v.array(WorkerLease) }),
      async (c) => {
      const { items, partial } = await fanOut(deps.fleet, deps.fanOutTimeoutMs, (client, signal) => client.workerLeases(c.get('principal').tenantId, signal));
      const sorted = (items as Array<{ sessionId: string }>).sort((a, b) => a.sessionId.localeCompare(b.sessionId));
      const page = pageOf(c);
      if (partial) c.header('X-Partial-Results', 'true');
      const slice = page.limit === undefined ? sorted : sorted.slice(page.offset, page.offset + page.limit);
      return sendList(c, page, { items: slice, total: sorted.length });
    })
    .get(
      '/topology',
      doc({
        summary: 'Show the runners',
        description: 'The runners of a multi-runner conductor: each one’s health, latency, active sessions, capabilities and the sandbox limits it enforces. 404 with a single runner.',
        response: Topology,
        errors: [404],
      }),
      async (c) => {
      const members = deps.fleet.members();
      if (members.length < 2) throw notFound('topology is available on a multi-runner conductor');
      await deps.fleet.probe();
      const runners = await Promise.all(
        members.map(async (m) => {
          let activeSessions: number | null = null;
          if (m.healthy) activeSessions = await m.client.runtimes().then((rs) => rs.reduce((n, r) => n + r.activeSessions, 0)).catch(() => null);
          // limits: what the runner enforces and how (its GET /runner/info `limits`); null from a runner without them
          const limits = runnerLimitsOf(m.info) ?? null;
          return { hash: m.info?.hash ?? null, url: m.url, healthy: m.healthy, latencyMs: m.latencyMs ?? null, activeSessions, error: m.lastError ?? null, capabilities: m.info?.capabilities ?? [], limits };
        }),
      );
      return c.json({ runners });
    });
}

/** The answers' types fit what the reference documents (compile-time only). */
export type DocumentedSession = Documents<typeof SessionSchema, SessionRecord>;
