/**
 * When a message was written, as its label shows it: the time alone today, the day and
 * time before that (with the year when it is not this year's). `now`, `locale` and
 * `timeZone` are the user's unless a test fixes them.
 */
export function messageTimeLabel(createdAt: string, now = new Date(), locale?: string, timeZone?: string): string | undefined {
  const at = new Date(createdAt);
  if (Number.isNaN(at.getTime())) return undefined;
  const day = formatter('day', locale, timeZone, { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }, 'en-CA');
  const time: Intl.DateTimeFormatOptions = { timeZone, hour: 'numeric', minute: '2-digit' };
  const atDay = day.format(at);
  const today = day.format(now);
  if (atDay === today) return formatter('time', locale, timeZone, time).format(at);
  if (atDay.slice(0, 4) === today.slice(0, 4)) return formatter('date', locale, timeZone, { ...time, month: 'short', day: 'numeric' }).format(at);
  return formatter('year', locale, timeZone, { ...time, month: 'short', day: 'numeric', year: 'numeric' }).format(at);
}

/** The full date and time, for the label's tooltip. */
export function messageTimeTitle(createdAt: string, locale?: string, timeZone?: string): string | undefined {
  const at = new Date(createdAt);
  if (Number.isNaN(at.getTime())) return undefined;
  return formatter('full', locale, timeZone, { timeZone, dateStyle: 'full', timeStyle: 'medium' }).format(at);
}

/**
 * Builds the user's formatters ahead of the first message shown: the first one built
 * loads the locale's data (40–70 ms on a loaded machine), time better spent while the
 * page waits for the conversation than between its arrival and its first frame.
 */
export function prepareMessageTimes(): void {
  const long = new Date(0).toISOString();
  messageTimeLabel(long);
  messageTimeLabel(new Date().toISOString());
  messageTimeLabel(long, new Date(60 * 86_400_000));
  messageTimeTitle(long);
}

/**
 * One `Intl.DateTimeFormat` per use, locale and time zone: building one costs far more
 * than formatting with it, and every message in view shows a time (a list scrolled fast
 * mounts dozens a second). `format` gives what `toLocaleString` with the same options does.
 */
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(use: string, locale: string | undefined, timeZone: string | undefined, options: Intl.DateTimeFormatOptions, fixedLocale?: string) {
  const key = `${use}|${fixedLocale ?? locale ?? ''}|${timeZone ?? ''}`;
  let found = formatters.get(key);
  if (!found) {
    found = new Intl.DateTimeFormat(fixedLocale ?? locale, options);
    formatters.set(key, found);
  }
  return found;
}
