import { createRoot } from 'react-dom/client';
import { App, type Signal } from './App';
import type { BackendChoice } from './backend';

/** Renders the app (the part of the code `main.tsx` loads once its early reads are asked for). */
export function boot(choice: BackendChoice, unauthorized: Signal): void {
  const root = document.getElementById('root');
  if (root) {
    // No StrictMode: its simulated remount would attach to every live stream twice.
    createRoot(root).render(<App choice={choice} unauthorized={unauthorized} />);
  }
}
