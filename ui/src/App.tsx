import { useSyncExternalStore } from 'react';
import type { BackendChoice } from './backend';
import { BackendContext } from './components/BackendContext';
import { TokenScreen } from './components/TokenScreen';
import { Workspace } from './components/Workspace';

export interface Signal {
  subscribe(listener: () => void): () => void;
  fired(): boolean;
}

interface AppProps {
  choice: BackendChoice;
  /** Fires when the server rejects our token. */
  unauthorized: Signal;
}

export function App({ choice, unauthorized }: AppProps) {
  const rejected = useSyncExternalStore(unauthorized.subscribe, unauthorized.fired);
  if (choice.kind === 'missing-token' || rejected) return <TokenScreen rejected={rejected} />;
  return (
    <BackendContext.Provider value={choice.backend}>
      <Workspace />
    </BackendContext.Provider>
  );
}
