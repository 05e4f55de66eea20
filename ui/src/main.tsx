import 'streamdown/styles.css';
import './styles.css';
import { createRoot } from 'react-dom/client';
import { App, type Signal } from './App';
import { chooseBackend } from './backend';
import { readListsEarly } from './backend/early';
import { PAGE_TURNS, readNewestPageEarly } from './chat/history';
import { prepareMessageTimes } from './chat/messageTime';
import { topicFromUrl } from './components/Workspace';
import { applyTheme, startTheme } from './theme';

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
  const { backend } = choice;
  // The conversation's first page, while the rest of the workspace is read.
  readNewestPageEarly((topicId) => backend.call('messages_page', { topicId, turns: PAGE_TURNS }), topicFromUrl());
  readListsEarly(backend);
  // While those are on their way (after React's first render, which is queued first).
  setTimeout(prepareMessageTimes, 0);
  choice.backend
    .call('settings_get')
    .then((settings) => applyTheme(settings.theme))
    .catch(() => {
      // The workspace says why the backend cannot be reached; the last colours stay.
    });
}

// Pasting the server's URL into a tab that shows the token screen only changes the
// fragment, which does not reload the page: start over when a token arrives that way.
window.addEventListener('hashchange', () => {
  if ((choice.kind === 'missing-token' || unauthorized.fired()) && window.location.hash.includes('token=')) {
    window.location.reload();
  }
});

const root = document.getElementById('root');
if (root) {
  // No StrictMode: its simulated remount would attach to every live stream twice.
  createRoot(root).render(<App choice={choice} unauthorized={unauthorized} />);
}
