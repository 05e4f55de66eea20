import { useState } from 'react';
import type { ApiFailure } from '../backend/backend';
import { useApprovals, useApprovalsState } from './ApprovalsContext';
import { ErrorNotice } from './ErrorNotice';

/**
 * Under a reply that waits for the user: what it waits for, and "Allow all" / "Deny all"
 * when several of its calls do. There is no Continue: answering the calls goes on.
 */
export function PendingApprovals({ approvalIds }: { approvalIds: readonly string[] }) {
  const approvals = useApprovals();
  const state = useApprovalsState();
  const [failure, setFailure] = useState<ApiFailure>();
  const open = approvalIds.filter((id) => !state.answered.has(id));
  const busy = open.some((id) => state.answering.has(id));
  if (open.length === 0) return null;

  const answerAll = (decision: 'approve' | 'deny') => {
    setFailure(undefined);
    void approvals.respondAll(open, { decision, scope: 'once' }).then(setFailure);
  };

  return (
    <div className="pending-approvals" data-testid="message-awaiting" role="status">
      <span className="pending-approvals-label">
        {open.length === 1 ? 'Waiting for your answer to the tool call above.' : `Waiting for your answers to ${open.length} tool calls.`}
      </span>
      {open.length > 1 && (
        <span className="pending-approvals-actions">
          <button type="button" className="button primary small" data-testid="approvals-allow-all" disabled={busy} onClick={() => answerAll('approve')}>
            Allow all
          </button>
          <button type="button" className="button small" data-testid="approvals-deny-all" disabled={busy} onClick={() => answerAll('deny')}>
            Deny all
          </button>
        </span>
      )}
      {failure && <ErrorNotice error={failure} onDismiss={() => setFailure(undefined)} />}
    </div>
  );
}
