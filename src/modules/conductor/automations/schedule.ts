import { Cron } from 'croner';
import { badRequest } from '../../../shared/errors.ts';

/**
 * Cron evaluation for automations, on `croner` (5 fields, or 6 with seconds, in an IANA timezone with daylight saving
 * handled): no cron arithmetic of our own. Every function here is pure so the table tests can pin the clock.
 */
export interface Cadence {
  cron: string;
  timezone: string;
  startAt: Date | null;
  endAt: Date | null;
}

/** An IANA zone name the runtime knows (`Intl` throws a RangeError for an unknown one). */
export function validTimezone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

function cronOf(c: Pick<Cadence, 'cron' | 'timezone'>): Cron {
  return new Cron(c.cron, { timezone: c.timezone, paused: true });
}

/** Throws 400 naming the field for a bad cron, timezone or window, or one that can never fire inside its window. */
export function checkCadence(c: Cadence, now: Date): void {
  const fields = c.cron.trim().split(/\s+/).length;
  if (fields !== 5 && fields !== 6) throw badRequest(`cron: expected 5 fields (or 6 with seconds), got ${fields}`);
  if (!validTimezone(c.timezone)) throw badRequest(`timezone: unknown IANA timezone: ${c.timezone}`);
  let cron: Cron;
  try {
    cron = cronOf(c);
  } catch (err) {
    throw badRequest(`cron: ${(err as Error).message}`);
  }
  if (c.startAt && c.endAt && c.endAt.getTime() <= c.startAt.getTime()) throw badRequest('endAt: must be after startAt (the window is empty)');
  // Never-firing: no slot at all (0 0 30 2 *), or none inside the window.
  const from = c.startAt && c.startAt > now ? new Date(c.startAt.getTime() - 1) : now;
  const first = cron.nextRun(from);
  if (!first) throw badRequest(`cron: ${c.cron} never fires`);
  if (c.startAt && c.endAt) {
    const inWindow = cron.nextRun(new Date(c.startAt.getTime() - 1));
    if (!inWindow || inWindow.getTime() > c.endAt.getTime()) throw badRequest(`cron: ${c.cron} never fires between startAt and endAt`);
  }
}

/** The first slot strictly after `after` inside the window, or null when there is none (the window is closed). */
export function nextSlot(c: Cadence, after: Date): Date | null {
  const from = c.startAt && c.startAt.getTime() > after.getTime() ? new Date(c.startAt.getTime() - 1) : after;
  const next = cronOf(c).nextRun(from);
  if (!next) return null;
  if (c.endAt && next.getTime() > c.endAt.getTime()) return null;
  return next;
}
