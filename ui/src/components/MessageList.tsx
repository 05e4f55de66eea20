import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { Virtuoso, type VirtuosoHandle } from 'react-virtuoso';
import type { TurnView } from '../chat/conversation';
import type { Provider } from '../protocol.gen';
import { REVEAL_EVENT, pendingReveal, revealDone } from '../search/revealMessage';
import { Turn, type ReplyCommands } from './Turn';

interface MessageListProps {
  turns: TurnView[];
  /** A message was sent and no reply has started yet. */
  waiting: boolean;
  providers: Provider[];
  commands: ReplyCommands;
  /** Turns above the first one shown can be read (`onLoadOlder`). */
  hasOlder?: boolean;
  loadingOlder?: boolean;
  onLoadOlder?: () => void;
}

/** Within this many pixels of the end counts as "at the bottom" (following). */
const AT_BOTTOM_PX = 48;
/** Virtuoso's index of the first item: room to prepend older pages below it. */
const FIRST_INDEX = 1_000_000_000;
/** Rendered beyond the window, above and below, so a wheel scroll shows no blank. */
const OVERSCAN = { top: 800, bottom: 400 };

/**
 * The conversation, oldest first, virtualized: only the turns near the window are in the
 * DOM, whatever the topic's length. It opens at the bottom and follows new text while
 * the user is there; scrolling up stops that, and "Jump to latest" (with the number of
 * messages that arrived meanwhile) goes back. Sending scrolls to the new message.
 * Older pages load as the top comes near, without moving what is on screen.
 */
export function MessageList({ turns, waiting, providers, commands, hasOlder = false, loadingOlder = false, onLoadOlder }: MessageListProps) {
  const list = useRef<VirtuosoHandle>(null);
  const { following, follow, unfollow, keepEnd, scrollerRef } = useFollowing();
  const firstItemIndex = usePrependAnchor(turns);
  const unread = useUnread(turns, following);

  const last = turns[turns.length - 1];
  const showWaiting = waiting && (!last || last.replies.length === 0);

  const toLatest = useCallback(() => {
    follow();
    list.current?.scrollToIndex({ index: 'LAST', align: 'end', behavior: 'auto' });
  }, [follow]);

  // Sending (or an edit) always shows the new message, wherever the view was.
  const wasWaiting = useRef(waiting);
  useEffect(() => {
    if (waiting && !wasWaiting.current) toLatest();
    wasWaiting.current = waiting;
  }, [waiting, toLatest]);

  // A message asked for (a search result): scroll its turn into the DOM, loading older
  // pages until it is there.
  const revealId = useRef(pendingReveal());
  const [revealAsked, setRevealAsked] = useState(0);
  useEffect(() => {
    const onReveal = (event: Event) => {
      revealId.current = (event as CustomEvent<string>).detail;
      setRevealAsked((n) => n + 1);
    };
    window.addEventListener(REVEAL_EVENT, onReveal);
    return () => window.removeEventListener(REVEAL_EVENT, onReveal);
  }, []);
  useEffect(() => {
    const wanted = revealId.current;
    if (wanted === undefined) return;
    if (pendingReveal() !== wanted) {
      revealId.current = undefined;
      return;
    }
    const at = turns.findIndex((turn) => messageIds(turn).includes(wanted));
    if (at >= 0) {
      revealId.current = undefined;
      revealDone(wanted);
      if (at < turns.length - 1) unfollow();
      // After the list's own first positioning (it opens at the end), and once more when
      // the heights of the turns around it are measured.
      const scroll = () => list.current?.scrollToIndex({ index: at, align: 'center', behavior: 'auto' });
      window.setTimeout(scroll, 0);
      window.setTimeout(scroll, 250);
    } else if (hasOlder && !loadingOlder) {
      onLoadOlder?.();
    }
  }, [revealAsked, turns, hasOlder, loadingOlder, onLoadOlder, unfollow]);

  const startReached = useCallback(() => {
    if (hasOlder && !loadingOlder) onLoadOlder?.();
  }, [hasOlder, loadingOlder, onLoadOlder]);

  const components = useMemo(
    () => ({
      Header: () => <ListHeader hasOlder={hasOlder} loadingOlder={loadingOlder} />,
      Footer: () => (showWaiting ? <WaitingNotice /> : <div className="message-list-end" />),
    }),
    [hasOlder, loadingOlder, showWaiting],
  );

  if (turns.length === 0 && !waiting) {
    return (
      <div className="message-list">
        <div className="message-column">
          <p className="muted empty-chat">Send a message to start the conversation.</p>
        </div>
      </div>
    );
  }

  return (
    <div className="message-list-frame">
      <Virtuoso
        ref={list}
        scrollerRef={scrollerRef}
        className="message-list"
        data={turns}
        firstItemIndex={firstItemIndex}
        initialTopMostItemIndex={{ index: 'LAST', align: 'end' }}
        computeItemKey={(_, turn) => turn.key}
        itemContent={(_, turn) => (
          <div className="message-row">
            <Turn turn={turn} providers={providers} commands={commands} />
          </div>
        )}
        // New turns, and a reply growing at the end, keep the end in view while following.
        // Neither Virtuoso's `followOutput` nor `scrollToIndex` here: both go on scrolling
        // to the end for a while after the list grew (100–150 ms, again with every chunk),
        // even when the user scrolled up meanwhile, so a wheel turn snapped back.
        totalListHeightChanged={keepEnd}
        atBottomThreshold={AT_BOTTOM_PX}
        atBottomStateChange={(atBottom) => {
          // Back at the end (scrolled there, or jumped): follow again.
          if (atBottom) follow();
        }}
        startReached={startReached}
        increaseViewportBy={OVERSCAN}
        components={components}
      />
      {!following && (
        <button type="button" className="button jump-to-latest" data-testid="jump-to-latest" onClick={toLatest}>
          ↓ Jump to latest
          {unread > 0 && (
            <span className="unread-count" data-testid="unread-count" aria-label={`${unread} new`}>
              {unread}
            </span>
          )}
        </button>
      )}
    </div>
  );
}

/** Keys that scroll a focused list up. */
const UP_KEYS = new Set(['ArrowUp', 'PageUp', 'Home']);

/**
 * Whether the list follows its end. Only the user stops it, by scrolling up (wheel, keys,
 * touch, the scrollbar, the browser's find): content growing below never moves the view
 * up, and a correction above it while at the end leaves the end in view.
 *
 * A wheel or key turned up stops it at once, before the view moves: the browser scrolls
 * those smoothly, over several frames, and a scroll to the end meanwhile (the next chunk
 * of a streaming reply) would cancel that scroll, so the user could never leave the end.
 * `keepEnd` reads `followingNow`, so no render has to come first.
 */
function useFollowing() {
  const [following, setFollowing] = useState(true);
  const followingNow = useRef(true);
  const [scroller, setScroller] = useState<HTMLElement | null>(null);
  const setTo = useCallback((value: boolean) => {
    followingNow.current = value;
    setFollowing(value);
  }, []);
  const follow = useCallback(() => setTo(true), [setTo]);
  const unfollow = useCallback(() => setTo(false), [setTo]);
  useEffect(() => {
    if (!scroller) return;
    let lastTop = scroller.scrollTop;
    const onScroll = () => {
      const top = scroller.scrollTop;
      const fromEnd = scroller.scrollHeight - top - scroller.clientHeight;
      if (top < lastTop - 4 && fromEnd > AT_BOTTOM_PX) unfollow();
      lastTop = top;
    };
    const onWheel = (event: WheelEvent) => {
      if (event.deltaY < 0 && scroller.scrollTop > 0) unfollow();
    };
    const onKeyDown = (event: KeyboardEvent) => {
      const typing = event.target instanceof HTMLElement && event.target.closest('input, textarea, [contenteditable="true"]');
      if (!typing && (UP_KEYS.has(event.key) || (event.key === ' ' && event.shiftKey)) && scroller.scrollTop > 0) unfollow();
    };
    scroller.addEventListener('scroll', onScroll, { passive: true });
    scroller.addEventListener('wheel', onWheel, { passive: true });
    scroller.addEventListener('keydown', onKeyDown);
    return () => {
      scroller.removeEventListener('scroll', onScroll);
      scroller.removeEventListener('wheel', onWheel);
      scroller.removeEventListener('keydown', onKeyDown);
    };
  }, [scroller, unfollow]);
  /** The list's height changed: while following, its end stays in view. */
  const scrollerNow = useRef<HTMLElement | null>(null);
  const keepEnd = useCallback(() => {
    const element = scrollerNow.current;
    if (followingNow.current && element) element.scrollTop = element.scrollHeight;
  }, []);
  const scrollerRef = useCallback((element: HTMLElement | Window | null) => {
    scrollerNow.current = element instanceof HTMLElement ? element : null;
    setScroller(scrollerNow.current);
  }, []);
  return { following, follow, unfollow, keepEnd, scrollerRef };
}

function ListHeader({ hasOlder, loadingOlder }: { hasOlder: boolean; loadingOlder: boolean }) {
  if (loadingOlder) {
    return (
      <div className="message-list-start muted small" role="status" data-testid="loading-older">
        Loading earlier messages…
      </div>
    );
  }
  return <div className={hasOlder ? 'message-list-start more' : 'message-list-start'} />;
}

function WaitingNotice() {
  return (
    <div className="message-row">
      <div className="waiting muted small" role="status">
        Waiting for the model…
      </div>
    </div>
  );
}

/**
 * Virtuoso's `firstItemIndex`: lowered by the number of turns that appeared above the
 * first one, in the same render, so prepending an older page keeps the view still.
 */
function usePrependAnchor(turns: readonly TurnView[]): number {
  const key = turns[0]?.key;
  const [anchor, setAnchor] = useState({ key, index: FIRST_INDEX });
  if (key === anchor.key) return anchor.index;
  // Adjusted while rendering (React's pattern for state from the previous render).
  const at = anchor.key === undefined ? -1 : turns.findIndex((turn) => turn.key === anchor.key);
  const index = at > 0 ? anchor.index - at : anchor.index;
  setAnchor({ key, index });
  return index;
}

const messageIds = (turn: TurnView) => [...(turn.user ? [turn.user.id] : []), ...turn.replies.map((reply) => reply.messageId)];

/** Messages that arrived at the end since the user last was at the bottom. */
function useUnread(turns: readonly TurnView[], atBottom: boolean): number {
  // `atBottom`: following the end; what arrives then is seen.
  const last = turns[turns.length - 1];
  const tail = last ? `${turns.length}:${last.key}:${last.replies.length}` : '';
  const [seen, setSeen] = useState({ tail: '', ids: new Set<string>() });
  if (atBottom) {
    if (seen.tail !== tail) {
      // Only the end changes while at the bottom: the last turns are enough to remember.
      setSeen({ tail, ids: new Set(turns.slice(-20).flatMap(messageIds)) });
    }
    return 0;
  }
  let count = 0;
  for (let i = turns.length - 1; i >= 0; i -= 1) {
    const fresh = messageIds(turns[i]).filter((id) => !seen.ids.has(id));
    if (fresh.length === 0) break;
    count += fresh.length;
  }
  return count;
}
