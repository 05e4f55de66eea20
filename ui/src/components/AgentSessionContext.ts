import { createContext, useContext } from 'react';
import type { ApiFailure } from '../backend/backend';

/** What a reply inside an agent session can do to the session (absent in chat topics). */
export interface AgentSessionActions {
  /** Whether the next turn resumes the agent's own session. */
  resumable: boolean;
  /** Forgets the agent's resume token: the next turn starts a fresh agent session. */
  reset(): Promise<ApiFailure | undefined>;
}

export const AgentSessionContext = createContext<AgentSessionActions | null>(null);

export function useAgentSession(): AgentSessionActions | null {
  return useContext(AgentSessionContext);
}
