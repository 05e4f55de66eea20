import type { Backend } from './backend';
import { HttpBackend } from './http';
import { IpcBackend, isTauri } from './ipc';
import { forgetToken, takeTokenFromLocation } from './token';

export type BackendChoice =
  | { kind: 'ready'; backend: Backend; mode: 'desktop' | 'server' }
  | { kind: 'missing-token' };

/**
 * Picks the transport once at startup: Tauri IPC inside the desktop app, otherwise HTTP
 * against the server that served this page.
 */
export function chooseBackend(onUnauthorized: () => void): BackendChoice {
  if (isTauri()) return { kind: 'ready', backend: new IpcBackend(), mode: 'desktop' };
  const token = takeTokenFromLocation();
  if (!token) return { kind: 'missing-token' };
  const backend = new HttpBackend({
    token,
    onUnauthorized: () => {
      forgetToken();
      onUnauthorized();
    },
  });
  return { kind: 'ready', backend, mode: 'server' };
}
