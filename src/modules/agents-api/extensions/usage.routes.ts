import { Hono, type Context } from 'hono';
import { doc } from '../../../shared/route-doc.ts';
import type { RunsService } from '../../conductor/index.ts';
import { badRequest } from '../../../shared/errors.ts';
import { readPaging } from '../../../shared/http.ts';
import type { AgentsEnv } from '../context.ts';
import { usageRows, usageTotals, type UsageWindow } from './usage.ts';
import { READ_ERRORS } from '../wire.schema.ts';
import { UsageEvents, UsageEventsQuery, UsageQuery, UsageTotals } from './extensions.schema.ts';

const DOCS = {
  totals: doc({
    summary: 'Get token usage',
    description: "The organisation's token usage and its cost from the price catalog, in total and per model, within `since` (inclusive) and `until` (exclusive) when given.",
    query: UsageQuery,
    response: UsageTotals,
    errors: READ_ERRORS,
  }),
  events: doc({ summary: 'List usage events', description: 'Each usage report of the runs (newest first) with its tokens and cost, a page at a time (`limit`, `offset`).', query: UsageEventsQuery, response: UsageEvents, errors: READ_ERRORS }),
};

/** `/api/usage` (totals, per model) and `/api/usage/events` (rows with cost), both with optional `since`/`until`. */
export function usageRoutes(runs: RunsService): Hono<AgentsEnv> {
  return new Hono<AgentsEnv>()
    .get('/usage', DOCS.totals, async (c) => c.json(await usageTotals(runs, c.get('principal').tenantId, readWindow(c))))
    .get('/usage/events', DOCS.events, async (c) => {
      const { limit, offset } = readPaging(c, 1000);
      return c.json(await usageRows(runs, c.get('principal').tenantId, readWindow(c), { limit: limit ?? 100, offset }));
    });
}

/** `since` (inclusive) and `until` (exclusive): ISO 8601 timestamps or Unix seconds. */
function readWindow(c: Context): UsageWindow {
  const read = (name: string): Date | undefined => {
    const raw = c.req.query(name);
    if (raw === undefined || raw === '') return undefined;
    const d = /^\d+$/.test(raw) ? new Date(Number(raw) * 1000) : new Date(raw);
    if (Number.isNaN(d.getTime())) throw badRequest(`${name}: expected an ISO 8601 timestamp or Unix seconds`);
    return d;
  };
  const w = { since: read('since'), until: read('until') };
  if (w.since && w.until && w.since >= w.until) throw badRequest('until: must be after since');
  return w;
}
