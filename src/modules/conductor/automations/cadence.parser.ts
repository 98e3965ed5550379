/**
 * Plain-language cadences to cron (POST /api/schedules/parse), in English. A small grammar of regular expressions,
 * not a general parser: a phrase either matches one of the forms below or is unparseable (422), never guessed.
 * Explicit choices: "twice a day" is 09:00 and 21:00; "weekly" is Monday 00:00; "daily"/"monthly" without a time are
 * midnight; "hourly" is on the hour.
 */
export interface ParsedCadence {
  cron: string;
  description: string;
}

const DAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'] as const;
const DAY = '(?:sun|mon|tue|tues|wed|thu|thur|thurs|fri|sat)(?:day|nesday|rsday|urday)?s?';
const TIME = '(?:noon|midday|midnight|\\d{1,2}(?::\\d{2})?\\s*(?:am|pm)?)';

const pad = (n: number) => String(n).padStart(2, '0');
const ordinal = (n: number) => `${n}${n % 10 === 1 && n !== 11 ? 'st' : n % 10 === 2 && n !== 12 ? 'nd' : n % 10 === 3 && n !== 13 ? 'rd' : 'th'}`;

function dayIndex(word: string): number | undefined {
  const i = DAYS.findIndex((d) => word.startsWith(d.slice(0, 3)));
  return i < 0 ? undefined : i;
}

/** `9am`, `08:30`, `6 pm`, `noon`, `midnight` → [hour, minute]; undefined when out of range. */
function timeOf(text: string | undefined): [number, number] | undefined {
  if (text === undefined) return [0, 0];
  const t = text.trim();
  if (t === 'noon' || t === 'midday') return [12, 0];
  if (t === 'midnight') return [0, 0];
  const m = /^(\d{1,2})(?::(\d{2}))?\s*(am|pm)?$/.exec(t);
  if (!m) return undefined;
  let h = Number(m[1]);
  const min = m[2] ? Number(m[2]) : 0;
  if (m[3]) {
    if (h < 1 || h > 12) return undefined;
    h = (h % 12) + (m[3] === 'pm' ? 12 : 0);
  }
  if (h > 23 || min > 59) return undefined;
  return [h, min];
}

type Rule = { re: RegExp; build: (m: RegExpExecArray) => ParsedCadence | undefined };

const at = (m: string | undefined) => timeOf(m);
const daily = (time: [number, number], days: string, what: string): ParsedCadence => ({ cron: `${time[1]} ${time[0]} * * ${days}`, description: `At ${pad(time[0])}:${pad(time[1])} ${what}` });

const RULES: Rule[] = [
  { re: /^every second$/, build: () => ({ cron: '* * * * * *', description: 'Every second' }) },
  { re: /^every (\d{1,2}) seconds?$/, build: (m) => (Number(m[1]) >= 1 && Number(m[1]) <= 59 ? { cron: `*/${Number(m[1])} * * * * *`, description: `Every ${Number(m[1])} seconds` } : undefined) },
  { re: /^every minute$/, build: () => ({ cron: '* * * * *', description: 'Every minute' }) },
  { re: /^every (\d{1,2}) min(?:ute)?s?$/, build: (m) => (Number(m[1]) >= 1 && Number(m[1]) <= 59 ? { cron: `*/${Number(m[1])} * * * *`, description: `Every ${Number(m[1])} minutes` } : undefined) },
  { re: /^(?:every quarter hour|every quarter of an hour)$/, build: () => ({ cron: '*/15 * * * *', description: 'Every 15 minutes' }) },
  { re: /^every half hour$|^every half an hour$/, build: () => ({ cron: '*/30 * * * *', description: 'Every 30 minutes' }) },
  { re: /^(?:hourly|every hour)$/, build: () => ({ cron: '0 * * * *', description: 'Every hour, on the hour' }) },
  { re: /^every (\d{1,2}) hours?$/, build: (m) => (Number(m[1]) >= 1 && Number(m[1]) <= 23 ? { cron: `0 */${Number(m[1])} * * *`, description: `Every ${Number(m[1])} hours, on the hour` } : undefined) },
  { re: /^twice (?:a|per|each) day$|^twice daily$/, build: () => ({ cron: '0 9,21 * * *', description: 'At 09:00 and 21:00 every day' }) },
  { re: new RegExp(`^(?:daily|every day|each day|everyday)(?: at (${TIME}))?$`), build: (m) => { const t = at(m[1]); return t && daily(t, '*', 'every day'); } },
  { re: new RegExp(`^(?:at )?(${TIME}) (?:daily|every day|each day)$`), build: (m) => { const t = at(m[1]); return t && daily(t, '*', 'every day'); } },
  { re: new RegExp(`^(?:on )?(?:every )?(?:weekday|weekdays)(?: at (${TIME}))?$`), build: (m) => { const t = at(m[1]); return t && daily(t, '1-5', 'on weekdays (Monday to Friday)'); } },
  { re: new RegExp(`^(?:on )?(?:every )?(?:weekend|weekends)(?: at (${TIME}))?$`), build: (m) => { const t = at(m[1]); return t && daily(t, '0,6', 'on Saturday and Sunday'); } },
  { re: /^weekly$|^every week$/, build: () => ({ cron: '0 0 * * 1', description: 'At 00:00 every Monday' }) },
  {
    re: new RegExp(`^(?:on )?(?:every )?(${DAY}(?:(?:, ?| and | & |,? and )${DAY})*)(?: at (${TIME}))?$`),
    build: (m) => {
      const t = at(m[2]);
      const words = m[1].split(/, ?| and | & |,? and /).map((w) => w.trim());
      const idx = words.map(dayIndex);
      if (!t || idx.some((i) => i === undefined)) return undefined;
      const days = [...new Set(idx as number[])].sort((a, b) => a - b);
      const names = days.map((d) => DAYS[d][0].toUpperCase() + DAYS[d].slice(1));
      return daily(t, days.join(','), `every ${names.length > 1 ? `${names.slice(0, -1).join(', ')} and ${names.at(-1)}` : names[0]}`);
    },
  },
  { re: /^monthly$|^every month$/, build: () => ({ cron: '0 0 1 * *', description: 'At 00:00 on the 1st of every month' }) },
  {
    re: new RegExp(`^(?:on )?(?:the )?(first|1st|last|(\\d{1,2})(?:st|nd|rd|th)?) day of (?:every|each|the) month(?: at (${TIME}))?$|^(?:on )?the (\\d{1,2})(?:st|nd|rd|th)? of (?:every|each) month(?: at (${TIME}))?$`),
    build: (m) => {
      const which = m[1] ?? m[4];
      const t = at(m[3] ?? m[5]);
      if (!t) return undefined;
      if (which === 'last') return { cron: `${t[1]} ${t[0]} L * *`, description: `At ${pad(t[0])}:${pad(t[1])} on the last day of every month` };
      const day = which === 'first' || which === '1st' ? 1 : Number(m[2] ?? m[4]);
      if (!(day >= 1 && day <= 31)) return undefined;
      return { cron: `${t[1]} ${t[0]} ${day} * *`, description: `At ${pad(t[0])}:${pad(t[1])} on the ${ordinal(day)} of every month` };
    },
  },
  { re: /^every (\d{1,2}) days$/, build: (m) => (Number(m[1]) >= 2 && Number(m[1]) <= 31 ? { cron: `0 0 */${Number(m[1])} * *`, description: `At 00:00 every ${Number(m[1])} days of the month, from the 1st` } : undefined) },
];

/** The cron of a phrase, or undefined when no form matches. */
export function parseCadence(text: string): ParsedCadence | undefined {
  const t = text.toLowerCase().replace(/[.!]+$/, '').replace(/\s+/g, ' ').trim();
  for (const rule of RULES) {
    const m = rule.re.exec(t);
    if (m) return rule.build(m);
  }
  return undefined;
}
