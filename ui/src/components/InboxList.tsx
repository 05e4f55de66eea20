import { useState, useSyncExternalStore } from 'react';
import type { InboxStore, SteerTiming } from '../chat/inbox';
import type { InboxItem } from '../protocol.gen';
import { ErrorNotice } from './ErrorNotice';

interface InboxListProps {
  store: InboxStore;
  /** When a steering message can take effect in the live reply; undefined while none runs. */
  steer?: SteerTiming | undefined;
}

/**
 * Messages waiting for this topic's turn to end, above the composer: each can be
 * edited, moved, cancelled, and, when held after a failed or stopped reply, sent now.
 */
export function InboxList({ store, steer }: InboxListProps) {
  const { items, error } = useSyncExternalStore(store.subscribe, store.getState);
  if ((!items || items.length === 0) && !error) return null;
  const list = items ?? [];
  return (
    <section className="inbox" aria-label="Queued messages">
      {error && <ErrorNotice error={error} onDismiss={() => store.dismissError()} />}
      {list.length > 0 && (
        <ol className="inbox-items">
          {list.map((item, index) => (
            <InboxEntry key={item.id} item={item} store={store} steer={steer} first={index === 0} last={index === list.length - 1} />
          ))}
        </ol>
      )}
    </section>
  );
}

interface InboxEntryProps {
  item: InboxItem;
  store: InboxStore;
  steer: SteerTiming | undefined;
  first: boolean;
  last: boolean;
}

function InboxEntry({ item, store, steer, first, last }: InboxEntryProps) {
  const [draft, setDraft] = useState<string>();
  const [working, setWorking] = useState(false);
  const held = item.state === 'held';

  const act = (action: () => Promise<unknown>) => {
    setWorking(true);
    void action().finally(() => setWorking(false));
  };
  const save = () => {
    const text = draft?.trim();
    if (!text) return;
    act(async () => {
      if (text === item.text || (await store.edit(item.id, text))) setDraft(undefined);
    });
  };

  return (
    <li className={`inbox-item ${item.state}`} data-testid="inbox-item" data-state={item.state} data-mode={item.mode} data-inbox-id={item.id}>
      <span className={`inbox-mode ${item.mode}`} title={modeTitle(item, steer)}>
        {held ? 'Held' : item.mode === 'steer' ? 'Steer' : 'Queued'}
      </span>
      {draft === undefined ? (
        <span className="inbox-text" data-testid="inbox-text">
          {item.text}
        </span>
      ) : (
        <form
          className="inbox-edit-form"
          onSubmit={(event) => {
            event.preventDefault();
            save();
          }}
        >
          <textarea
            aria-label="Queued message"
            value={draft}
            autoFocus
            rows={1}
            onChange={(event) => setDraft(event.target.value)}
            onKeyDown={(event) => {
              if (event.key === 'Escape') setDraft(undefined);
              if (event.key === 'Enter' && !event.shiftKey) {
                event.preventDefault();
                save();
              }
            }}
          />
          <button type="submit" className="button small primary" data-testid="inbox-save" disabled={working || !draft.trim()}>
            Save
          </button>
          <button type="button" className="button small ghost" onClick={() => setDraft(undefined)}>
            Cancel
          </button>
        </form>
      )}
      {item.models && draft === undefined && (
        <span className="inbox-models muted small" data-testid="inbox-models" title="Answered by these models when it runs">
          → {item.models.map((model) => model.model).join(' + ')}
        </span>
      )}
      {held && item.note && <div className="inbox-note">{item.note}</div>}
      {!held && item.mode === 'steer' && steer === 'after-reply' && (
        <div className="inbox-note steer-waits" data-testid="inbox-steer-waits">
          Waits for the reply to end: it has called no tool, so it has no step to stop at. Then this goes first.
        </div>
      )}
      {!held && item.mode === 'steer' && steer === 'after-turn' && (
        <div className="inbox-note steer-waits" data-testid="inbox-steer-queued">
          Queued — sent as the agent’s next prompt after this turn (it takes no message mid-turn). Interrupt to send it now.
        </div>
      )}
      {draft === undefined && (
        <span className="inbox-actions">
          {held && (
            <button type="button" className="button small" data-testid="inbox-release" disabled={working} onClick={() => act(() => store.release(item.id))}>
              Send now
            </button>
          )}
          <button
            type="button"
            className="icon-button"
            data-testid="inbox-edit"
            aria-label="Edit queued message"
            title="Edit"
            disabled={working}
            onClick={() => setDraft(item.text)}
          >
            ✎
          </button>
          <button
            type="button"
            className="icon-button"
            data-testid="inbox-up"
            aria-label="Move up"
            title="Run earlier"
            disabled={working || first}
            onClick={() => act(() => store.move(item.id, 'up'))}
          >
            ↑
          </button>
          <button
            type="button"
            className="icon-button"
            data-testid="inbox-down"
            aria-label="Move down"
            title="Run later"
            disabled={working || last}
            onClick={() => act(() => store.move(item.id, 'down'))}
          >
            ↓
          </button>
          <button
            type="button"
            className="icon-button"
            data-testid="inbox-cancel"
            aria-label="Cancel queued message"
            title="Cancel"
            disabled={working}
            onClick={() => act(() => store.cancel(item.id))}
          >
            ×
          </button>
        </span>
      )}
    </li>
  );
}

/** What an item's mode means, on hover. */
function modeTitle(item: InboxItem, steer: SteerTiming | undefined): string {
  if (item.state === 'held') return 'Held after a reply failed or was stopped: not sent until you press Send now';
  if (item.mode === 'queue') return 'Runs as a new turn when the reply ends, in this order';
  if (steer === 'after-reply') return 'Goes first when the reply ends (the reply has no step to stop at)';
  if (steer === 'agent') return 'The agent reads this before its next tool call; if it makes none, this runs next';
  if (steer === 'after-turn') return 'Sent as the agent’s next prompt when this turn ends, ahead of queued ones';
  return 'The reply stops after its next tool call’s results; then this goes first';
}
