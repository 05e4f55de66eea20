import { useEffect, useState } from 'react';
import { toApiFailure, type ApiFailure } from '../backend/backend';
import { argumentsSummary } from '../chat/tools';
import type { AuditEntry, AuditListRequest, Topic } from '../protocol.gen';
import { useBackend } from './BackendContext';
import { ErrorNotice } from './ErrorNotice';

/** Who decided: you, a rule, or the tool's default. */
export function actorLabel(actor: string): string {
  if (actor === 'user') return 'You';
  if (actor === 'default') return 'Default';
  if (actor.startsWith('rule:')) return 'Rule';
  return actor;
}

const DECISION_LABEL: Record<AuditEntry['decision'], string> = { allow: 'allowed', deny: 'denied', ask: 'asked you' };

/** Every decision about a tool call, newest first: when, who, what, on which arguments, where and why. */
export function AuditLog({ topics }: { topics: Topic[] }) {
  const backend = useBackend();
  const [entries, setEntries] = useState<AuditEntry[]>();
  const [error, setError] = useState<ApiFailure>();
  const [attempt, setAttempt] = useState(0);

  useEffect(() => {
    let current = true;
    backend
      .call('tool_audit_list', { limit: 200 } satisfies AuditListRequest)
      .then((list) => {
        if (current) setEntries(list);
      })
      .catch((failure: unknown) => {
        if (current) setError(toApiFailure(failure, 'Could not read the audit log'));
      });
    return () => {
      current = false;
    };
  }, [backend, attempt]);

  const titles = new Map(topics.map((topic) => [topic.id, topic.title || 'Untitled']));
  return (
    <>
      <div className="settings-heading">
        <h3>Audit log</h3>
        <button type="button" className="button ghost small" data-testid="audit-refresh" onClick={() => setAttempt((n) => n + 1)}>
          Refresh
        </button>
      </div>
      <p className="muted small">The last 200 decisions about tool calls, newest first.</p>
      {error && <ErrorNotice error={error} onRetry={() => setAttempt((n) => n + 1)} onDismiss={() => setError(undefined)} />}
      {entries && entries.length === 0 && <p className="muted">No tool calls yet.</p>}
      {entries && entries.length > 0 && (
        <div className="table-scroll">
          <table className="audit-table" data-testid="audit-table">
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Who</th>
                <th scope="col">Decision</th>
                <th scope="col">Tool</th>
                <th scope="col">Arguments</th>
                <th scope="col">Topic</th>
                <th scope="col">Reason</th>
              </tr>
            </thead>
            <tbody>
              {entries.map((entry) => (
                <tr
                  key={entry.id}
                  data-testid="audit-row"
                  data-actor={entry.actor}
                  data-decision={entry.decision}
                  data-tool={entry.toolName}
                  data-tool-call-id={entry.toolCallId}
                >
                  <td title={entry.at}>{new Date(entry.at).toLocaleString()}</td>
                  <td title={entry.actor}>{actorLabel(entry.actor)}</td>
                  <td className={`audit-decision ${entry.decision}`}>{DECISION_LABEL[entry.decision]}</td>
                  <td>
                    <code>{entry.toolName}</code>
                  </td>
                  <td className="audit-args" title={JSON.stringify(entry.input)}>
                    {argumentsSummary(entry.input, 60)}
                  </td>
                  <td>{titles.get(entry.topicId) ?? <span className="muted">deleted topic</span>}</td>
                  <td>{entry.reason ?? ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
