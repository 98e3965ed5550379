import { badRequest } from '../../../shared/errors.ts';

/**
 * The session rail: a list of sessions grouped by when they were last used, the way a chat sidebar shows them, in
 * calendar days of a timezone (UTC unless the caller names one): `today`, `yesterday`, `previous_7_days` (2 to 7 days
 * ago), `previous_30_days` (8 to 30 days ago) and `older`. The same groups filter `GET /api/sessions?group=`.
 */
export const RAIL_GROUPS = ['today', 'yesterday', 'previous_7_days', 'previous_30_days', 'older'] as const;
export type RailGroup = (typeof RAIL_GROUPS)[number];

const LABELS: Record<RailGroup, string> = {
  today: 'Today',
  yesterday: 'Yesterday',
  previous_7_days: 'Previous 7 days',
  previous_30_days: 'Previous 30 days',
  older: 'Older',
};

export function parseGroup(raw: string | undefined): RailGroup | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (!(RAIL_GROUPS as readonly string[]).includes(raw)) throw badRequest(`group: one of ${RAIL_GROUPS.join(', ')}`);
  return raw as RailGroup;
}

/** An IANA timezone (`tz` query), checked by the platform's own time zone data. */
export function parseTimeZone(raw: string | undefined): string {
  if (raw === undefined || raw === '') return 'UTC';
  try {
    return new Intl.DateTimeFormat('en', { timeZone: raw }).resolvedOptions().timeZone;
  } catch {
    throw badRequest(`tz: an IANA timezone such as Europe/Paris, got "${raw}"`);
  }
}

/** Days since the epoch of the calendar date `at` falls on in `timeZone`. */
function dayNumber(at: Date, timeZone: string): number {
  const parts = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).formatToParts(at);
  const part = (type: string) => Number(parts.find((p) => p.type === type)!.value);
  return Math.floor(Date.UTC(part('year'), part('month') - 1, part('day')) / 86_400_000);
}

export function groupOf(lastUsedAt: string, now: Date, timeZone: string): RailGroup {
  const days = dayNumber(now, timeZone) - dayNumber(new Date(lastUsedAt), timeZone);
  if (days <= 0) return 'today';
  if (days === 1) return 'yesterday';
  if (days <= 7) return 'previous_7_days';
  if (days <= 30) return 'previous_30_days';
  return 'older';
}

/** The non-empty groups in rail order, each keeping the order of `sessions`. */
export function railOf<S extends { lastUsedAt: string }>(sessions: readonly S[], now: Date, timeZone: string): Array<{ group: RailGroup; label: string; sessions: S[] }> {
  const by = new Map<RailGroup, S[]>();
  for (const s of sessions) {
    const g = groupOf(s.lastUsedAt, now, timeZone);
    by.set(g, [...(by.get(g) ?? []), s]);
  }
  return RAIL_GROUPS.filter((g) => by.has(g)).map((group) => ({ group, label: LABELS[group], sessions: by.get(group)! }));
}
