/**
 * When a message was written, as its label shows it: the time alone today, the day and
 * time before that (with the year when it is not this year's). `now`, `locale` and
 * `timeZone` are the user's unless a test fixes them.
 */
export function messageTimeLabel(createdAt: string, now = new Date(), locale?: string, timeZone?: string): string | undefined {
  const at = new Date(createdAt);
  if (Number.isNaN(at.getTime())) return undefined;
  const day = (date: Date) => new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(date);
  const time: Intl.DateTimeFormatOptions = { timeZone, hour: 'numeric', minute: '2-digit' };
  if (day(at) === day(now)) return at.toLocaleTimeString(locale, time);
  const sameYear = day(at).slice(0, 4) === day(now).slice(0, 4);
  return at.toLocaleString(locale, { ...time, month: 'short', day: 'numeric', ...(sameYear ? {} : { year: 'numeric' }) });
}

/** The full date and time, for the label's tooltip. */
export function messageTimeTitle(createdAt: string, locale?: string, timeZone?: string): string | undefined {
  const at = new Date(createdAt);
  if (Number.isNaN(at.getTime())) return undefined;
  return at.toLocaleString(locale, { timeZone, dateStyle: 'full', timeStyle: 'medium' });
}
