import { Cron } from 'croner';
import { describe, expect, it } from 'vitest';
import { parseCadence } from './cadence.parser.ts';

describe('plain-language cadences', () => {
  it.each([
    ['every 15 minutes', '*/15 * * * *'],
    ['Every 5 min', '*/5 * * * *'],
    ['every minute', '* * * * *'],
    ['every second', '* * * * * *'],
    ['every 10 seconds', '*/10 * * * * *'],
    ['every quarter hour', '*/15 * * * *'],
    ['every half hour', '*/30 * * * *'],
    ['hourly', '0 * * * *'],
    ['every hour', '0 * * * *'],
    ['every 2 hours', '0 */2 * * *'],
    ['every day at 9am', '0 9 * * *'],
    ['daily at 17:45', '45 17 * * *'],
    ['daily at midnight', '0 0 * * *'],
    ['daily', '0 0 * * *'],
    ['every day at noon', '0 12 * * *'],
    ['at 7pm every day', '0 19 * * *'],
    ['weekdays at 08:30', '30 8 * * 1-5'],
    ['every weekday at 6 pm', '0 18 * * 1-5'],
    ['weekends at 10am', '0 10 * * 0,6'],
    ['every monday and thursday at 6pm', '0 18 * * 1,4'],
    ['every sunday at noon', '0 12 * * 0'],
    ['on fridays at 4:15pm', '15 16 * * 5'],
    ['mon, wed and fri at 7am', '0 7 * * 1,3,5'],
    ['every tuesday', '0 0 * * 2'],
    ['weekly', '0 0 * * 1'],
    ['monthly', '0 0 1 * *'],
    ['first day of every month at 8:00', '0 8 1 * *'],
    ['the 15th of every month at 9am', '0 9 15 * *'],
    ['last day of every month at 23:00', '0 23 L * *'],
    ['twice a day', '0 9,21 * * *'],
    ['twice daily', '0 9,21 * * *'],
    ['every 3 days', '0 0 */3 * *'],
  ])('%s → %s', (text, cron) => {
    const parsed = parseCadence(text);
    expect(parsed?.cron).toBe(cron);
    expect(parsed?.description).toMatch(/^(At|Every) /);
    expect(new Cron(cron, { paused: true }).nextRun()).toBeInstanceOf(Date);
  });

  it.each(['', 'whenever you like', 'every 0 minutes', 'every 61 minutes', 'daily at 25:00', 'every funday at 9', 'at 13pm every day', 'the 32nd of every month'])(
    'does not guess at %j',
    (text) => expect(parseCadence(text)).toBeUndefined(),
  );
});
