import type { ReplyUsage, UsageGroup, UsageReport, UsageTotals } from '../protocol.gen';

/**
 * How usage reads in the UI: token counts, costs, durations and speeds, the reply footer's
 * line, and the usage report as CSV. Pure functions, so they are tested without a backend.
 */

/** `1234` as `1,234`: exact counts in tables and tooltips. */
export function formatCount(count: number): string {
  return Math.round(count).toLocaleString('en-US');
}

/** Short token counts for a footer: `950`, `1.2k`, `12k`, `1.3M`. */
export function formatTokensShort(tokens: number): string {
  if (tokens < 1000) return String(Math.round(tokens));
  if (tokens < 1_000_000) {
    const thousands = tokens / 1000;
    return `${thousands < 10 ? thousands.toFixed(1).replace(/\.0$/, '') : Math.round(thousands)}k`;
  }
  return `${(tokens / 1_000_000).toFixed(1).replace(/\.0$/, '')}M`;
}

/** US dollars with as many decimals as a small amount needs: `$0.0021`, `$0.42`, `$12.30`. */
export function formatCost(usd: number): string {
  if (usd === 0) return '$0';
  if (usd < 0.0001) return '<$0.0001';
  if (usd < 0.01) return `$${usd.toFixed(4)}`;
  if (usd < 1) return `$${usd.toFixed(3)}`;
  return `$${usd.toFixed(2)}`;
}

/** Milliseconds as `350 ms`, `1.4 s`, `2 min 5 s`. */
export function formatMillis(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1).replace(/\.0$/, '')} s`;
  const minutes = Math.floor(ms / 60_000);
  const seconds = Math.round((ms % 60_000) / 1000);
  return seconds > 0 ? `${minutes} min ${seconds} s` : `${minutes} min`;
}

/** A speed in tokens per second, e.g. `48 tok/s`. */
export function formatSpeed(tokensPerSecond: number): string {
  return `${tokensPerSecond < 10 ? tokensPerSecond.toFixed(1) : Math.round(tokensPerSecond)} tok/s`;
}

/** Input + output tokens. */
export function totalTokens(totals: Pick<UsageTotals, 'inputTokens' | 'outputTokens'>): number {
  return totals.inputTokens + totals.outputTokens;
}

/** A cost, or what to show when there is none: some calls without a price. */
export function costLabel(totals: UsageTotals): string | undefined {
  if (totals.costUsd === undefined) return undefined;
  return totals.unpricedCalls > 0 ? `${formatCost(totals.costUsd)}+` : formatCost(totals.costUsd);
}

/**
 * The pieces of a reply's usage footer, in order: tokens, cost, time to first token, speed.
 * (The reply's time is shown once, beside its model: `MessageTime`.)
 */
export function footerItems(usage: ReplyUsage): { key: string; text: string; title: string }[] {
  const t = usage.totals;
  const items = [
    {
      key: 'tokens',
      text: `${formatTokensShort(totalTokens(t))} tokens`,
      title:
        `${formatCount(t.inputTokens)} in (${formatCount(t.cachedTokens)} cached) · ` +
        `${formatCount(t.outputTokens)} out (${formatCount(t.reasoningTokens)} reasoning) · ` +
        `${t.calls} model call${t.calls === 1 ? '' : 's'}`,
    },
  ];
  const cost = costLabel(t);
  if (cost !== undefined) {
    items.push({
      key: 'cost',
      text: cost,
      title: t.unpricedCalls > 0 ? 'Some calls used a model without a price (Settings → Usage)' : 'Cost at the prices in Settings → Usage',
    });
  }
  if (usage.timeToFirstTokenMs !== undefined) {
    items.push({ key: 'ttft', text: `${formatMillis(usage.timeToFirstTokenMs)} to first token`, title: 'Time to first token' });
  }
  if (usage.tokensPerSecond !== undefined) {
    items.push({ key: 'speed', text: formatSpeed(usage.tokensPerSecond), title: 'Output tokens per second, after the first token' });
  }
  return items;
}

function csvField(value: string | number | undefined): string {
  if (value === undefined) return '';
  const text = String(value);
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

const CSV_HEADER = ['group', 'key', 'calls', 'input_tokens', 'cached_tokens', 'output_tokens', 'reasoning_tokens', 'cost_usd', 'unpriced_calls', 'duration_ms'];

function csvRow(group: string, row: UsageGroup): string {
  const t = row.totals;
  return [group, row.key, t.calls, t.inputTokens, t.cachedTokens, t.outputTokens, t.reasoningTokens, t.costUsd?.toFixed(6), t.unpricedCalls, t.durationMs]
    .map(csvField)
    .join(',');
}

/** The report as CSV: one row per day, model and provider (a `group` column says which), then the total. */
export function reportCsv(report: UsageReport): string {
  const lines = [CSV_HEADER.join(',')];
  for (const row of report.byDay) lines.push(csvRow('day', row));
  for (const row of report.byModel) lines.push(csvRow('model', row));
  for (const row of report.byProvider) lines.push(csvRow('provider', row));
  lines.push(csvRow('total', { key: 'total', totals: report.total }));
  return `${lines.join('\r\n')}\r\n`;
}

/** `YYYY-MM-DD` of a local date. */
export function isoDay(date: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

/** Every day from `from` to `to` (inclusive), so a chart shows days without usage too. */
export function daysBetween(from: string, to: string): string[] {
  const days: string[] = [];
  const start = new Date(`${from}T12:00:00`);
  const end = new Date(`${to}T12:00:00`);
  if (Number.isNaN(start.getTime()) || Number.isNaN(end.getTime())) return days;
  for (let day = start; day <= end && days.length < 3660; day = new Date(day.getTime() + 86_400_000)) {
    days.push(isoDay(day));
  }
  return days;
}
