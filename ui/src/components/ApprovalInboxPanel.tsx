import { useState } from 'react';
import { argumentsSummary } from '../chat/tools';
import { askForNotifications, declineNotifications, shouldOfferNotifications } from '../status/notifications';
import { useApprovalsState } from './ApprovalsContext';

interface ApprovalInboxPanelProps {
  onOpenTopic: (topicId: string) => void;
}

/**
 * The sidebar's "Approvals" entry: how many tool calls wait for the user across all
 * topics; opened, each with its topic, tool and arguments, a click away from its card.
 */
export function ApprovalInboxPanel({ onOpenTopic }: ApprovalInboxPanelProps) {
  const state = useApprovalsState();
  const [open, setOpen] = useState(false);
  const pending = state.pending ?? [];
  const count = pending.length;

  return (
    <section className="approval-inbox" aria-label="Tool calls waiting for you">
      <button
        type="button"
        className={`button ghost approval-inbox-button${count > 0 ? ' has-pending' : ''}`}
        data-testid="approval-inbox-button"
        aria-expanded={open}
        onClick={() => setOpen(!open)}
        title={count > 0 ? 'Tool calls waiting for your approval' : 'No tool call waits for your approval'}
      >
        <span>Approvals</span>
        {count > 0 && (
          <span className="badge warn" data-testid="approval-inbox-count" aria-label={`${count} waiting`}>
            {count}
          </span>
        )}
      </button>
      {count > 0 && <NotificationOffer />}
      {open && (
        <div className="approval-inbox-list">
          {count === 0 ? (
            <p className="muted small">Nothing waits for your approval.</p>
          ) : (
            <ul>
              {pending.map((approval) => (
                <li key={approval.id}>
                  <button
                    type="button"
                    className="approval-inbox-item"
                    data-testid="approval-inbox-item"
                    data-topic-id={approval.topicId}
                    data-approval-id={approval.id}
                    onClick={() => {
                      onOpenTopic(approval.topicId);
                      setOpen(false);
                    }}
                  >
                    <span className="approval-inbox-topic">{approval.topicTitle || 'Untitled'}</span>
                    <span className="approval-inbox-tool">{approval.toolName}</span>
                    <span className="approval-inbox-args">{argumentsSummary(approval.input, 60)}</span>
                  </button>
                </li>
              ))}
            </ul>
          )}
          {state.error && <p className="field-error">{state.error.message}</p>}
        </div>
      )}
    </section>
  );
}

/** Asks once, politely, whether to notify about waiting tool calls while the tab is hidden. */
function NotificationOffer() {
  const [offered, setOffered] = useState(shouldOfferNotifications);
  if (!offered) return null;
  return (
    <div className="notification-offer small" data-testid="notification-offer">
      <span>Get a browser notification when a tool call waits for you while this tab is in the background?</span>
      <span className="notification-offer-actions">
        <button
          type="button"
          className="button small"
          onClick={() => {
            setOffered(false);
            void askForNotifications();
          }}
        >
          Turn on
        </button>
        <button
          type="button"
          className="button ghost small"
          onClick={() => {
            setOffered(false);
            declineNotifications();
          }}
        >
          No thanks
        </button>
      </span>
    </div>
  );
}
