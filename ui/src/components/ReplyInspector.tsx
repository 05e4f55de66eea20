import { useEffect, useState } from 'react';
import { toApiFailure, type ApiFailure } from '../backend/backend';
import type { ReplyDetails, TimelineEntry } from '../protocol.gen';
import { formatCost, formatCount, formatMillis, formatSpeed } from '../usage/format';
import { useBackend } from './BackendContext';
import { ErrorNotice } from './ErrorNotice';

interface ReplyInspectorProps {
  topicId: string;
  messageId: string;
}

/**
 * The reply inspector: how a reply was made, step by step — each model call (request size,
 * time to first token, duration, tokens, finish reason, retries), each tool call (input,
 * output size, duration, who allowed it) and each wait for the user's approval.
 */
export function ReplyInspector({ topicId, messageId }: ReplyInspectorProps) {
  const backend = useBackend();
  const [details, setDetails] = useState<ReplyDetails>();
  const [error, setError] = useState<ApiFailure>();
  const [attempt, setAttempt] = useState(0);

  useEffect(() => {
    let current = true;
    backend
      .call('usage_reply', { topicId, messageId })
      .then((loaded) => {
        if (!current) return;
        setDetails(loaded);
        setError(undefined);
      })
      .catch((failure: unknown) => {
        if (current) setError(toApiFailure(failure, 'Could not load the reply’s details'));
      });
    return () => {
      current = false;
    };
  }, [backend, topicId, messageId, attempt]);

  return (
    <section className="reply-inspector" data-testid="reply-inspector" aria-label="Reply details">
      {error && <ErrorNotice error={error} onRetry={() => setAttempt((n) => n + 1)} />}
      {!details && !error && <p className="muted small">Loading details…</p>}
      {details && details.timeline.length === 0 && (
        <p className="muted small">Nothing was recorded for this reply (it was made before usage was kept, or by the demo).</p>
      )}
      {details && details.timeline.length > 0 && (
        <ol className="timeline">
          {details.timeline.map((entry, index) => (
            <TimelineRow key={index} entry={entry} />
          ))}
        </ol>
      )}
    </section>
  );
}

function TimelineRow({ entry }: { entry: TimelineEntry }) {
  switch (entry.kind) {
    case 'modelCall':
      return <ModelCallRow entry={entry} />;
    case 'toolCall':
      return <ToolCallRow entry={entry} />;
    case 'approvalWait':
      return <ApprovalWaitRow entry={entry} />;
  }
}

function ModelCallRow({ entry }: { entry: Extract<TimelineEntry, { kind: 'modelCall' }> }) {
  const title = entry.agent
    ? `Agent turn · ${entry.model}`
    : `Step ${entry.step + 1}${entry.attempt > 0 ? ` (retry ${entry.attempt})` : ''} · model call · ${entry.model}`;
  const facts: [string, string][] = [];
  if (entry.requestMessages !== undefined || entry.requestChars !== undefined) {
    facts.push(['Request', [entry.requestMessages !== undefined ? `${entry.requestMessages} messages` : '', entry.requestChars !== undefined ? `${formatCount(entry.requestChars)} characters` : ''].filter(Boolean).join(', ')]);
  }
  if (entry.timeToFirstTokenMs !== undefined) facts.push(['First token', formatMillis(entry.timeToFirstTokenMs)]);
  facts.push(['Duration', formatMillis(entry.durationMs)]);
  facts.push([
    'Tokens',
    `${formatCount(entry.inputTokens)} in${entry.cachedTokens > 0 ? ` (${formatCount(entry.cachedTokens)} cached)` : ''}, ` +
      `${formatCount(entry.outputTokens)} out${entry.reasoningTokens > 0 ? ` (${formatCount(entry.reasoningTokens)} reasoning)` : ''}`,
  ]);
  if (entry.tokensPerSecond !== undefined) facts.push(['Speed', formatSpeed(entry.tokensPerSecond)]);
  facts.push(['Cost', entry.costUsd !== undefined ? formatCost(entry.costUsd) : 'no price for this model']);
  facts.push(['Finish', entry.finish]);
  if (entry.providerRetries > 0) facts.push(['Provider retries', String(entry.providerRetries)]);
  if (entry.error) facts.push(['Error', entry.error]);
  return (
    <li className="timeline-entry model-call" data-testid="timeline-entry" data-kind="modelCall" data-finish={entry.finish}>
      <div className="timeline-title">{title}</div>
      <Facts facts={facts} />
    </li>
  );
}

function ToolCallRow({ entry }: { entry: Extract<TimelineEntry, { kind: 'toolCall' }> }) {
  const facts: [string, string][] = [['Input', compactJson(entry.input)], ['State', entry.state]];
  if (entry.durationMs !== undefined) facts.push(['Duration', formatMillis(entry.durationMs)]);
  if (entry.outputChars !== undefined) facts.push(['Output', `${formatCount(entry.outputChars)} characters`]);
  facts.push(['Allowed by', decider(entry.decidedBy, entry.state)]);
  if (entry.error) facts.push(['Error', entry.error]);
  return (
    <li className="timeline-entry tool-call" data-testid="timeline-entry" data-kind="toolCall" data-tool={entry.toolName}>
      <div className="timeline-title">Tool call · {entry.toolName}</div>
      <Facts facts={facts} />
    </li>
  );
}

function ApprovalWaitRow({ entry }: { entry: Extract<TimelineEntry, { kind: 'approvalWait' }> }) {
  const outcome = entry.state === 'pending' ? 'still waiting' : entry.state === 'approved' ? 'approved' : 'denied';
  const facts: [string, string][] = [['Answer', outcome]];
  if (entry.waitedMs !== undefined) facts.push([entry.state === 'pending' ? 'Waiting for' : 'Waited', formatMillis(entry.waitedMs)]);
  return (
    <li className="timeline-entry approval-wait" data-testid="timeline-entry" data-kind="approvalWait">
      <div className="timeline-title">Waiting for approval · {entry.toolName}</div>
      <Facts facts={facts} />
    </li>
  );
}

function Facts({ facts }: { facts: [string, string][] }) {
  return (
    <dl className="timeline-facts">
      {facts.map(([label, value]) => (
        <div key={label}>
          <dt>{label}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

/** Who let a call run (or refused it), in words. */
function decider(decidedBy: string | undefined, state: string): string {
  if (decidedBy === undefined) return state === 'requested' ? 'not decided yet' : 'not recorded';
  if (decidedBy === 'user') return 'you';
  if (decidedBy === 'app') return 'the app';
  if (decidedBy === 'default') return 'the tool’s default';
  if (decidedBy.startsWith('rule:')) return `an approval rule (${decidedBy.slice(5)})`;
  return decidedBy;
}

function compactJson(value: unknown): string {
  const text = JSON.stringify(value) ?? '';
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}
