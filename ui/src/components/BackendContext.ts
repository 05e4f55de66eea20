import { createContext, useContext } from 'react';
import type { Backend } from '../backend/backend';

export const BackendContext = createContext<Backend | null>(null);

/** The backend chosen at startup; every screen below `App` has one. */
export function useBackend(): Backend {
  const backend = useContext(BackendContext);
  if (!backend) throw new Error('useBackend outside <BackendContext.Provider>');
  return backend;
}
