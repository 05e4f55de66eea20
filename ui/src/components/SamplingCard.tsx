import { useState } from 'react';
import { isApiError } from '../backend/backend';
import { SAMPLING_STATE_LABEL } from '../chat/elicitation';
import type { ApiError, SamplingCard } from '../protocol.gen';
import { useBackend } from './BackendContext';
import { ErrorNotice } from './ErrorNotice';

interface SamplingCardProps {
  card: SamplingCard;
  /** The reply is running: only then can a pending request still be answered. */
  isLive: boolean;
}

/**
 * A server asks the reply's model to write something during its tool call (MCP sampling):
 * what it would send, and to which model; Allow runs it (once, or from now on for this
 * server), Deny tells the server no.
 */
export function SamplingCardView({ card, isLive }: SamplingCardProps) {
  const open = card.state === 'pending' && isLive;
  return (
    <section
      className={`elicitation-card sampling-card ${open ? 'open' : card.state}`}
      data-testid="sampling-card"
      data-sampling-id={card.samplingId}
      data-state={card.state}
      aria-label={`The ${card.serverName} MCP server asks the model`}
    >
      <header className="elicitation-header">
        <span className="elicitation-server">{card.serverName}</span>
        <span className="small muted">
          wants <strong data-testid="sampling-model">{card.model}</strong> to answer (at most {card.maxTokens} tokens)
        </span>
      </header>
      <div className="sampling-messages" data-testid="sampling-messages">
        {card.systemPrompt && (
          <p className="sampling-message system">
            <span className="sampling-role">System</span> {card.systemPrompt}
          </p>
        )}
        {card.messages.map((message, index) => (
          <p key={index} className={`sampling-message ${message.role}`}>
            <span className="sampling-role">{message.role === 'user' ? 'User' : 'Assistant'}</span> {message.text}
          </p>
        ))}
      </div>
      {open ? <SamplingActions card={card} /> : <SamplingOutcome card={card} isLive={isLive} />}
    </section>
  );
}

function SamplingOutcome({ card, isLive }: SamplingCardProps) {
  if (card.state === 'pending') {
    return (
      <p className="elicitation-outcome small muted" data-testid="sampling-outcome" role="status">
        {isLive ? 'Waiting…' : 'No longer open: the reply that asked has ended.'}
      </p>
    );
  }
  const outcomeClass = card.state === 'done' ? 'accepted' : card.state === 'running' ? '' : 'declined';
  return (
    <div className={`elicitation-outcome ${outcomeClass}`} data-testid="sampling-outcome" role="status">
      <span>
        {card.allowedByRule && card.state !== 'denied' && 'Allowed by your setting for this server. '}
        {SAMPLING_STATE_LABEL[card.state]}
      </span>
      {card.problem && <p className="elicitation-problem small">{card.problem}</p>}
      {card.result !== undefined && (
        <p className="sampling-result" data-testid="sampling-result">
          {card.result}
        </p>
      )}
    </div>
  );
}

function SamplingActions({ card }: { card: SamplingCard }) {
  const backend = useBackend();
  const [busy, setBusy] = useState(false);
  const [sent, setSent] = useState(false);
  const [failure, setFailure] = useState<ApiError>();
  const respond = async (decision: 'allow' | 'deny', always = false) => {
    setBusy(true);
    setFailure(undefined);
    try {
      await backend.call('mcp_sampling_respond', always ? { samplingId: card.samplingId, decision, always } : { samplingId: card.samplingId, decision });
      setSent(true);
    } catch (error) {
      setFailure(isApiError(error) ? error : { kind: 'internal', message: String(error), retryable: true });
    } finally {
      setBusy(false);
    }
  };
  if (sent) {
    return (
      <p className="elicitation-outcome small muted" data-testid="sampling-outcome" role="status">
        Sending your answer…
      </p>
    );
  }
  return (
    <>
      {failure && <ErrorNotice error={failure} hint="Nothing was sent. The tool call that asked may have ended." />}
      <div className="approval-actions" role="group" aria-label={`Answer ${card.serverName}`}>
        <button type="button" className="button primary small" data-testid="sampling-allow" disabled={busy} onClick={() => void respond('allow')}>
          {busy ? 'Sending…' : 'Allow once'}
        </button>
        <button
          type="button"
          className="button small"
          data-testid="sampling-allow-always"
          disabled={busy}
          title={`Let ${card.serverName} use the model without asking from now on (Settings → MCP turns it off)`}
          onClick={() => void respond('allow', true)}
        >
          Always allow for {card.serverName}
        </button>
        <button type="button" className="button ghost small danger-text" data-testid="sampling-deny" disabled={busy} onClick={() => void respond('deny')}>
          Deny
        </button>
      </div>
    </>
  );
}
