import { describe, expect, it } from 'vitest';
import { groupOf, parseGroup, parseTimeZone, railOf } from './rail.ts';

describe('the session rail', () => {
  const now = new Date('2026-03-10T01:30:00Z');

  it('groups by calendar days of last use, not by 24-hour spans', () => {
    const at = (iso: string) => groupOf(iso, now, 'UTC');
    expect(at('2026-03-10T00:00:01Z')).toBe('today');
    expect(at('2026-03-09T23:59:59Z')).toBe('yesterday'); // two minutes ago, but yesterday
    expect(at('2026-03-08T12:00:00Z')).toBe('previous_7_days');
    expect(at('2026-03-03T00:00:00Z')).toBe('previous_7_days');
    expect(at('2026-03-02T23:00:00Z')).toBe('previous_30_days');
    expect(at('2026-02-08T00:00:00Z')).toBe('previous_30_days');
    expect(at('2026-02-07T23:00:00Z')).toBe('older');
    expect(at('2026-03-11T00:00:00Z')).toBe('today'); // a clock ahead of ours is not the future
  });

  it("counts days in the caller's timezone", () => {
    // 01:30 UTC is still the evening of the 9th in New York: the 9th there is today
    expect(groupOf('2026-03-09T15:00:00Z', now, 'UTC')).toBe('yesterday');
    expect(groupOf('2026-03-09T15:00:00Z', now, 'America/New_York')).toBe('today');
  });

  it('keeps the order it is given inside each group and leaves empty groups out', () => {
    const s = (id: string, lastUsedAt: string) => ({ id, lastUsedAt });
    const rail = railOf([s('a', '2026-03-10T01:00:00Z'), s('b', '2026-01-01T00:00:00Z'), s('c', '2026-03-10T00:10:00Z')], now, 'UTC');
    expect(rail.map((g) => [g.group, g.label, g.sessions.map((x) => x.id)])).toEqual([
      ['today', 'Today', ['a', 'c']],
      ['older', 'Older', ['b']],
    ]);
  });

  it('reads the group and timezone parameters, refusing what it does not know', () => {
    expect(parseGroup(undefined)).toBeUndefined();
    expect(parseGroup('yesterday')).toBe('yesterday');
    expect(() => parseGroup('last_week')).toThrow('group: one of today, yesterday, previous_7_days, previous_30_days, older');
    expect(parseTimeZone('')).toBe('UTC');
    expect(parseTimeZone('Europe/Paris')).toBe('Europe/Paris');
    expect(() => parseTimeZone('Europe/Atlantis')).toThrow(/^tz: an IANA timezone/);
  });
});
