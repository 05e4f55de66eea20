import 'streamdown/styles.css';
import './styles.css';
import type { Signal } from './App';
import { chooseBackend } from './backend';
import { readNewestPageEarly } from './chat/earlyPage';
import { applyTheme, startTheme } from './theme';
import { topicFromUrl } from './topicAddress';

// This module is small on purpose: it asks for what the first screen needs (the theme,
// the open topic's newest messages) and only then loads the app's code (`boot.tsx`), so
// those reads run on the backend while the browser parses and starts the app.

startTheme();

function createSignal(): Signal & { fire(): void } {
  let fired = false;
  const listeners = new Set<() => void>();
  return {
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    fired: () => fired,
    fire() {
      fired = true;
      listeners.forEach((listener) => listener());
    },
  };
}

const unauthorized = createSignal();
const choice = chooseBackend(() => unauthorized.fire());
// The stored choice is the truth; the painted one came from this browser's last visit.
if (choice.kind === 'ready') {
  choice.backend
    .call('settings_get')
    .then((settings) => applyTheme(settings.theme))
    .catch(() => {
      // The workspace says why the backend cannot be reached; the last colours stay.
    });
  const topicId = topicFromUrl();
  if (topicId !== undefined) readNewestPageEarly(choice.backend, topicId);
}

// Pasting the server's URL into a tab that shows the token screen only changes the
// fragment, which does not reload the page: start over when a token arrives that way.
window.addEventListener('hashchange', () => {
  if ((choice.kind === 'missing-token' || unauthorized.fired()) && window.location.hash.includes('token=')) {
    window.location.reload();
  }
});

void import('./boot').then(({ boot }) => boot(choice, unauthorized));
