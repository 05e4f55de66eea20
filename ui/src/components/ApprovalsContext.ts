import { createContext, useContext, useSyncExternalStore } from 'react';
import type { ApprovalInbox, ApprovalsState } from '../chat/approvals';

/** The window's one view of tool calls waiting for the user (see `ApprovalInbox`). */
export const ApprovalsContext = createContext<ApprovalInbox | null>(null);

export function useApprovals(): ApprovalInbox {
  const approvals = useContext(ApprovalsContext);
  if (!approvals) throw new Error('useApprovals outside <ApprovalsContext.Provider>');
  return approvals;
}

/** The approvals' state; re-renders the caller when it changes. */
export function useApprovalsState(): ApprovalsState {
  const approvals = useApprovals();
  return useSyncExternalStore(approvals.subscribe, approvals.getState);
}
