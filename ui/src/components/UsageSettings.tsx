import { useEffect, useState } from 'react';
import { toApiFailure, type ApiFailure } from '../backend/backend';
import type { UsageGroup, UsageReport } from '../protocol.gen';
import { costLabel, daysBetween, formatCount, formatMillis, isoDay, reportCsv, totalTokens } from '../usage/format';
import { useBackend } from './BackendContext';
import { ErrorNotice } from './ErrorNotice';
import { UsageChart } from './UsageChart';
import { UsagePrices } from './UsagePrices';

type Period = '7' | '30' | '90' | 'all';

const PERIODS: readonly { id: Period; label: string }[] = [
  { id: '7', label: 'Last 7 days' },
  { id: '30', label: 'Last 30 days' },
  { id: '90', label: 'Last 90 days' },
  { id: 'all', label: 'All time' },
];

/** The first day of a period ending today; undefined for all time. */
function periodStart(period: Period, today: Date): string | undefined {
  if (period === 'all') return undefined;
  return isoDay(new Date(today.getFullYear(), today.getMonth(), today.getDate() - (Number(period) - 1)));
}

/** Settings → Usage: totals by day, model and provider over a period (chart, tables, CSV), and the prices. */
export function UsageSettings() {
  const backend = useBackend();
  const [period, setPeriod] = useState<Period>('30');
  const [report, setReport] = useState<{ period: Period; from: string | undefined; to: string; report: UsageReport }>();
  const [error, setError] = useState<ApiFailure>();
  const [attempt, setAttempt] = useState(0);
  const [copied, setCopied] = useState(false);

  useEffect(() => {
    let current = true;
    const today = new Date();
    const from = periodStart(period, today);
    const to = isoDay(today);
    backend
      .call('usage_report', { from, to, utcOffsetMinutes: -today.getTimezoneOffset() })
      .then((loaded) => {
        if (!current) return;
        setReport({ period, from, to, report: loaded });
        setError(undefined);
      })
      .catch((failure: unknown) => {
        if (current) setError(toApiFailure(failure, 'Could not load the usage report'));
      });
    return () => {
      current = false;
    };
  }, [backend, period, attempt]);

  const shown = report?.period === period ? report : undefined;
  const days = shown ? daysBetween(shown.from ?? shown.report.byDay[0]?.key ?? shown.to, shown.to) : [];
  const csv = shown ? reportCsv(shown.report) : '';
  const csvName = shown ? `colloquy-usage-${shown.from ?? 'all'}-to-${shown.to}.csv` : 'colloquy-usage.csv';

  const copy = () => {
    void navigator.clipboard.writeText(csv).then(
      () => setCopied(true),
      (failure: unknown) => setError(toApiFailure(failure, 'Could not copy the CSV')),
    );
  };

  return (
    <>
      <h3>Usage</h3>
      <p className="muted small">
        Tokens and cost of every model call, from the usage ledger. Costs use the prices below (change them to match your
        plan); a model without a price shows tokens only.
      </p>
      <div className="usage-toolbar">
        <label className="field inline">
          <span className="field-label">Period</span>
          <select data-testid="usage-period" value={period} onChange={(event) => setPeriod(event.target.value as Period)}>
            {PERIODS.map((candidate) => (
              <option key={candidate.id} value={candidate.id}>
                {candidate.label}
              </option>
            ))}
          </select>
        </label>
        {shown && (
          <div className="usage-export">
            <a
              className="button"
              data-testid="usage-export-csv"
              href={`data:text/csv;charset=utf-8,${encodeURIComponent(csv)}`}
              download={csvName}
            >
              Export CSV
            </a>
            <button type="button" className="button ghost" onClick={copy} data-testid="usage-copy-csv">
              {copied ? 'Copied' : 'Copy CSV'}
            </button>
          </div>
        )}
      </div>
      {error && <ErrorNotice error={error} onRetry={() => setAttempt((n) => n + 1)} />}
      {!shown && !error && <p className="muted">Loading usage…</p>}
      {shown && (
        <div data-testid="usage-report">
          <p className="usage-total" data-testid="usage-total">
            <strong>{formatCount(totalTokens(shown.report.total))}</strong> tokens
            {costLabel(shown.report.total) !== undefined && (
              <>
                {' · '}
                <strong>{costLabel(shown.report.total)}</strong>
              </>
            )}
            {' · '}
            {shown.report.total.calls} model calls
            {shown.report.total.unpricedCalls > 0 && (
              <span className="muted"> ({shown.report.total.unpricedCalls} without a price)</span>
            )}
          </p>
          {shown.report.total.calls === 0 ? (
            <p className="muted">No model calls in this period.</p>
          ) : (
            <>
              <UsageChart days={days} byDay={shown.report.byDay} />
              <UsageTable title="By model" keyLabel="Model" groups={shown.report.byModel} testId="usage-by-model" />
              <UsageTable title="By provider" keyLabel="Provider" groups={shown.report.byProvider} testId="usage-by-provider" />
              <UsageTable title="By day" keyLabel="Day" groups={[...shown.report.byDay].reverse()} testId="usage-by-day" />
            </>
          )}
        </div>
      )}
      <UsagePrices onChanged={() => setAttempt((n) => n + 1)} />
    </>
  );
}

interface UsageTableProps {
  title: string;
  keyLabel: string;
  groups: UsageGroup[];
  testId: string;
}

function UsageTable({ title, keyLabel, groups, testId }: UsageTableProps) {
  return (
    <>
      <h4>{title}</h4>
      <table className="audit-table usage-table" data-testid={testId}>
        <thead>
          <tr>
            <th scope="col">{keyLabel}</th>
            <th scope="col">Calls</th>
            <th scope="col">Input</th>
            <th scope="col">Cached</th>
            <th scope="col">Output</th>
            <th scope="col">Reasoning</th>
            <th scope="col">Time</th>
            <th scope="col">Cost</th>
          </tr>
        </thead>
        <tbody>
          {groups.map((group) => (
            <tr key={group.key} data-key={group.key}>
              <td>{group.key}</td>
              <td>{formatCount(group.totals.calls)}</td>
              <td>{formatCount(group.totals.inputTokens)}</td>
              <td>{formatCount(group.totals.cachedTokens)}</td>
              <td>{formatCount(group.totals.outputTokens)}</td>
              <td>{formatCount(group.totals.reasoningTokens)}</td>
              <td>{formatMillis(group.totals.durationMs)}</td>
              <td>{costLabel(group.totals) ?? <span className="muted">no price</span>}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
