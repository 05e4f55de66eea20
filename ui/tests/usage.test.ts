import { describe, expect, it } from 'vitest';
import type { ReplyUsage, UsageReport, UsageTotals } from '../src/protocol.gen';
import { costLabel, daysBetween, footerItems, formatCost, formatMillis, formatTokensShort, reportCsv } from '../src/usage/format';
import { priceInputFromDraft } from '../src/usage/priceForm';

const totals = (overrides: Partial<UsageTotals> = {}): UsageTotals => ({
  calls: 1,
  inputTokens: 1000,
  outputTokens: 500,
  reasoningTokens: 0,
  cachedTokens: 0,
  unpricedCalls: 0,
  durationMs: 900,
  ...overrides,
});

describe('usage formatting', () => {
  it('writes small costs with the decimals they need', () => {
    expect(formatCost(0)).toBe('$0');
    expect(formatCost(0.00002)).toBe('<$0.0001');
    expect(formatCost(0.0021)).toBe('$0.0021');
    expect(formatCost(0.36)).toBe('$0.360');
    expect(formatCost(12.3)).toBe('$12.30');
  });

  it('shortens token counts and durations', () => {
    expect(formatTokensShort(950)).toBe('950');
    expect(formatTokensShort(1500)).toBe('1.5k');
    expect(formatTokensShort(2000)).toBe('2k');
    expect(formatTokensShort(1_250_000)).toBe('1.3M');
    expect(formatMillis(350)).toBe('350 ms');
    expect(formatMillis(1400)).toBe('1.4 s');
    expect(formatMillis(125_000)).toBe('2 min 5 s');
  });

  it('marks a cost that leaves out calls without a price, and has none without any price', () => {
    expect(costLabel(totals({ costUsd: 2 }))).toBe('$2.00');
    expect(costLabel(totals({ costUsd: 2, unpricedCalls: 1 }))).toBe('$2.00+');
    expect(costLabel(totals())).toBeUndefined();
  });

  it('shows tokens, cost, time to first token and speed under a reply (its time is shown once, beside the model)', () => {
    const usage: ReplyUsage = {
      messageId: 'm',
      totals: totals({ costUsd: 0.0021, cachedTokens: 200, reasoningTokens: 50 }),
      timeToFirstTokenMs: 420,
      tokensPerSecond: 48.2,
      startedAt: '2026-11-25T12:03:00.000Z',
      model: 'gpt-4o',
    };
    const items = footerItems(usage);
    expect(items.map((item) => item.key)).toEqual(['tokens', 'cost', 'ttft', 'speed']);
    expect(items[0]?.text).toBe('1.5k tokens');
    expect(items[0]?.title).toContain('200 cached');
    expect(items[1]?.text).toBe('$0.0021');
    expect(items[2]?.text).toBe('420 ms to first token');
    expect(items[3]?.text).toBe('48 tok/s');
  });

  it('leaves out the cost of a reply whose model has no price', () => {
    const usage: ReplyUsage = { messageId: 'm', totals: totals({ unpricedCalls: 1 }), startedAt: 'not a time', model: 'local' };
    expect(footerItems(usage).map((item) => item.key)).toEqual(['tokens']);
  });

  it('exports the report as CSV with a row per day, model and provider, quoting what needs it', () => {
    const report: UsageReport = {
      total: totals({ costUsd: 1.5 }),
      byDay: [{ key: '2026-11-25', totals: totals({ costUsd: 1.5 }) }],
      byModel: [{ key: 'model, "quoted"', totals: totals() }],
      byProvider: [{ key: 'Acme', totals: totals({ costUsd: 1.5 }) }],
    };
    const lines = reportCsv(report).trimEnd().split('\r\n');
    expect(lines[0]).toBe('group,key,calls,input_tokens,cached_tokens,output_tokens,reasoning_tokens,cost_usd,unpriced_calls,duration_ms');
    expect(lines[1]).toBe('day,2026-11-25,1,1000,0,500,0,1.500000,0,900');
    expect(lines[2]).toBe('model,"model, ""quoted""",1,1000,0,500,0,,0,900');
    expect(lines.at(-1)).toBe('total,total,1,1000,0,500,0,1.500000,0,900');
  });

  it('lists every day of a period for the chart', () => {
    expect(daysBetween('2026-02-27', '2026-03-02')).toEqual(['2026-02-27', '2026-02-28', '2026-03-01', '2026-03-02']);
    expect(daysBetween('2026-03-02', '2026-03-01')).toEqual([]);
    expect(daysBetween('nonsense', '2026-03-01')).toEqual([]);
  });
});

describe('the price form', () => {
  it('turns typed prices into a request, cached price optional', () => {
    expect(priceInputFromDraft({ model: ' gpt-4o ', inputUsd: '2.5', cachedInputUsd: '', outputUsd: '$10' })).toEqual({
      input: { model: 'gpt-4o', inputUsd: 2.5, outputUsd: 10 },
    });
    expect(priceInputFromDraft({ model: 'm', inputUsd: '0', cachedInputUsd: '.5', outputUsd: '1' })).toEqual({
      input: { model: 'm', inputUsd: 0, outputUsd: 1, cachedInputUsd: 0.5 },
    });
  });

  it('says what is wrong, by field', () => {
    const result = priceInputFromDraft({ model: '', inputUsd: 'lots', cachedInputUsd: '-1', outputUsd: '' });
    expect(result).toHaveProperty('errors');
    if ('errors' in result) expect(Object.keys(result.errors).sort()).toEqual(['cachedInputUsd', 'inputUsd', 'model', 'outputUsd']);
  });
});
