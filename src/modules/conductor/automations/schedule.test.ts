import { describe, expect, it } from 'vitest';
import { checkCadence, nextSlot } from './schedule.ts';

const cad = (cron: string, timezone = 'UTC', startAt: string | null = null, endAt: string | null = null) => ({
  cron,
  timezone,
  startAt: startAt ? new Date(startAt) : null,
  endAt: endAt ? new Date(endAt) : null,
});
const next = (cron: string, timezone: string, after: string) => nextSlot(cad(cron, timezone), new Date(after))?.toISOString() ?? null;

describe('automation schedule', () => {
  // Europe/Berlin leaves summer time on 2026-10-25 03:00 CEST -> 02:00 CET; America/New_York enters it on 2026-03-08 02:00 -> 03:00.
  it.each([
    ['0 9 * * *', 'Europe/Berlin', '2026-10-24T08:00:00Z', '2026-10-25T08:00:00.000Z'], // 09:00 CET = 08:00Z after the change
    ['0 9 * * *', 'Europe/Berlin', '2026-10-23T08:00:00Z', '2026-10-24T07:00:00.000Z'], // 09:00 CEST = 07:00Z before it
    ['0 9 * * *', 'America/New_York', '2026-03-07T15:00:00Z', '2026-03-08T13:00:00.000Z'], // 09:00 EDT
    ['0 9 * * *', 'America/New_York', '2026-03-06T15:00:00Z', '2026-03-07T14:00:00.000Z'], // 09:00 EST
    ['30 2 * * *', 'America/New_York', '2026-03-07T08:00:00Z', '2026-03-08T07:00:00.000Z'], // 02:30 does not exist on 03-08: once, at 03:00 EDT (Vixie cron's rule, croner's)
    ['0 * * * *', 'Europe/Berlin', '2026-10-25T00:30:00Z', '2026-10-25T01:00:00.000Z'], // hourly keeps real hours through the fold
    ['0 0 * * 1', 'Asia/Tokyo', '2026-11-24T00:00:00Z', '2026-11-29T15:00:00.000Z'], // Monday 00:00 JST
    ['*/15 * * * * *', 'UTC', '2026-11-24T00:00:01Z', '2026-11-24T00:00:15.000Z'], // six fields: seconds
  ])('%s in %s after %s is %s', (cron, tz, after, expected) => {
    expect(next(cron, tz, after)).toBe(expected);
  });

  it('keeps slots inside the window and answers null once it is closed', () => {
    const c = cad('0 12 * * *', 'UTC', '2026-12-01T00:00:00Z', '2026-12-03T00:00:00Z');
    expect(nextSlot(c, new Date('2026-11-24T00:00:00Z'))?.toISOString()).toBe('2026-12-01T12:00:00.000Z');
    expect(nextSlot(c, new Date('2026-12-02T12:00:00Z'))).toBeNull();
  });

  it.each([
    [cad('0 0 30 2 *'), /^cron: .*never fires/],
    [cad('61 * * * *'), /^cron: /],
    [cad('* * *'), /^cron: expected 5 fields/],
    [cad('* * * * *', 'Mars/Olympus'), /^timezone: unknown IANA timezone/],
    [cad('* * * * *', 'UTC', '2026-12-02T00:00:00Z', '2026-12-01T00:00:00Z'), /^endAt: /],
    [cad('0 0 1 1 *', 'UTC', '2027-02-01T00:00:00Z', '2027-03-01T00:00:00Z'), /^cron: .*never fires between/],
  ])('refuses %o', (c, message) => {
    expect(() => checkCadence(c, new Date('2026-11-24T00:00:00Z'))).toThrow(message);
  });
});
