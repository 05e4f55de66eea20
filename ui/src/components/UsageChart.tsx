import type { UsageGroup } from '../protocol.gen';
import { costLabel, formatCost, formatCount, formatTokensShort, totalTokens } from '../usage/format';

interface UsageChartProps {
  /** Every day of the period, oldest first; days without usage are absent from `byDay`. */
  days: string[];
  byDay: UsageGroup[];
}

const HEIGHT = 140;
const BAR_GAP = 2;

/**
 * Usage by day as bars (plain SVG): cost when any day has one, else tokens. Each bar has
 * a tooltip with the day's exact numbers.
 */
export function UsageChart({ days, byDay }: UsageChartProps) {
  const byKey = new Map(byDay.map((group) => [group.key, group.totals]));
  const byCost = byDay.some((group) => (group.totals.costUsd ?? 0) > 0);
  const value = (day: string) => {
    const totals = byKey.get(day);
    if (!totals) return 0;
    return byCost ? (totals.costUsd ?? 0) : totalTokens(totals);
  };
  const max = Math.max(0, ...days.map(value));
  const width = Math.max(days.length * 12, 240);
  const barWidth = days.length > 0 ? width / days.length : width;
  const label = byCost ? `Cost by day, up to ${formatCost(max)}` : `Tokens by day, up to ${formatTokensShort(max)}`;
  return (
    <figure className="usage-chart" data-testid="usage-chart">
      <svg viewBox={`0 0 ${width} ${HEIGHT}`} preserveAspectRatio="none" role="img" aria-label={label}>
        <line x1={0} y1={HEIGHT - 0.5} x2={width} y2={HEIGHT - 0.5} className="usage-chart-axis" />
        {days.map((day, index) => {
          const totals = byKey.get(day);
          const height = max > 0 ? (value(day) / max) * (HEIGHT - 8) : 0;
          const tip = totals
            ? `${day}: ${formatCount(totalTokens(totals))} tokens${costLabel(totals) !== undefined ? `, ${costLabel(totals)}` : ''}`
            : `${day}: no usage`;
          return (
            <rect
              key={day}
              x={index * barWidth + BAR_GAP / 2}
              y={HEIGHT - height}
              width={Math.max(barWidth - BAR_GAP, 1)}
              height={height}
              className="usage-chart-bar"
              data-day={day}
            >
              <title>{tip}</title>
            </rect>
          );
        })}
      </svg>
      <figcaption className="small muted">
        {label}
        {days.length > 0 && ` · ${days[0]} to ${days[days.length - 1]}`}
      </figcaption>
    </figure>
  );
}
