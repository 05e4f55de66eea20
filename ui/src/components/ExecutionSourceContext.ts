import { createContext, useContext } from 'react';
import type { ExecutionSource } from '../chat/transport';

/** The shown topic's session, which live replies stream from (one `Chat` per execution). */
export const ExecutionSourceContext = createContext<ExecutionSource | null>(null);

export function useExecutionSource(): ExecutionSource {
  const source = useContext(ExecutionSourceContext);
  if (!source) throw new Error('useExecutionSource outside <ExecutionSourceContext.Provider>');
  return source;
}
