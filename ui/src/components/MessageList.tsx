import { memo, useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import { Virtualizer, type VirtualizerHandle } from 'virtua';
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
/** Within this many pixels of the top, the next older page is read. */
const NEAR_TOP_PX = 800;
/** Rendered beyond the window, above and below, so a wheel scroll shows no blank. */
const BUFFER_PX = 600;
/** The space above the first turn: virtua's `startMargin`, what precedes the list in its scroller. */
const START_PX = 14;

/**
 * The conversation, oldest first, virtualized: only the turns near the window are in the
 * DOM, whatever the topic's length. It opens at the bottom and follows new text while
 * the user is there; scrolling up stops that, and "Jump to latest" (with the number of
 * messages that arrived meanwhile) goes back. Sending scrolls to the new message.
 * Older pages load as the top comes near, without moving what is on screen.
 */
export const MessageList = memo(function MessageList({
  turns,
  waiting,
  providers,
  commands,
  hasOlder = false,
  loadingOlder = false,
  onLoadOlder,
}: MessageListProps) {
  const list = useRef<VirtualizerHandle>(null);
  const { following, follow, unfollow, keepEnd, scroller, scrollerNow, scrollerRef } = useFollowing();
  const prepended = usePrepended(turns);
  const unread = useUnread(turns, following);

  const last = turns[turns.length - 1];
  const lastIndex = useMemo(() => (turns.length > 0 ? [turns.length - 1] : []), [turns.length]);
  const showWaiting = waiting && (!last || last.replies.length === 0);

  const toLatest = useCallback(() => {
    follow();
    keepEnd();
  }, [follow, keepEnd]);

  // Opens at the end; new turns, and the waiting notice below them, keep the end in view
  // while following (a reply growing in place is `onResize`).
  useLayoutEffect(keepEnd, [keepEnd, turns, showWaiting]);

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
      // virtua scrolls again as the turns around it are measured.
      list.current?.scrollToIndex(at, { align: 'center' });
    } else if (hasOlder && !loadingOlder) {
      onLoadOlder?.();
    }
  }, [revealAsked, turns, hasOlder, loadingOlder, onLoadOlder, unfollow]);

  const loadOlderNearTop = useCallback(
    (offset: number) => {
      if (offset < NEAR_TOP_PX && hasOlder && !loadingOlder) onLoadOlder?.();
    },
    [hasOlder, loadingOlder, onLoadOlder],
  );
  // A page that ended near the top (or too short to scroll) reads the next one: no scroll
  // event would come to ask. Read in the next frame, once virtua has measured the new turns
  // and moved the view to keep it still: a position read before that (0, at the top) is
  // stale either way.
  useEffect(() => {
    if (!scroller) return;
    const frame = requestAnimationFrame(() => loadOlderNearTop(scroller.scrollTop));
    return () => cancelAnimationFrame(frame);
  }, [scroller, loadOlderNearTop, turns.length]);

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
      <div ref={scrollerRef} className="message-list">
        <div style={{ height: START_PX }} />
        <Virtualizer
          ref={list}
          scrollRef={scrollerNow}
          data={turns}
          // Older turns prepended: virtua keeps the view still, counting from the end.
          shift={prepended}
          startMargin={START_PX}
          bufferSize={BUFFER_PX}
          // The newest turn stays in the DOM wherever the view is: a streaming reply is
          // not remounted (its markdown parsed again) when the user scrolls back to it,
          // and it is there from the first frame, before the end is measured.
          keepMounted={lastIndex}
          onScroll={loadOlderNearTop}
          // A turn's height changed (a reply growing, a code block highlighted).
          onResize={keepEnd}
        >
          {(turn) => (
            <div key={turn.key} className="message-row">
              <Turn turn={turn} providers={providers} commands={commands} />
            </div>
          )}
        </Virtualizer>
        {showWaiting ? <WaitingNotice /> : <div className="message-list-end" />}
      </div>
      {loadingOlder && (
        <div className="loading-older muted small" role="status" data-testid="loading-older">
          Loading earlier messages…
        </div>
      )}
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
});

/** A scroll position of the list: `scrollTop` and `scrollHeight`. */
interface ScrollPoint {
  top: number;
  height: number;
}

/**
 * What a scroll event of the list means for following its end:
 * - `left-end`: moved up, away from the end, by the user: dragging the scrollbar or a
 *   finger (`pressed`), or a script scrolling while the content kept its height;
 * - `kept-still`: moved up while the content changed height and nothing was pressed:
 *   virtua keeping the shown turns still as one above is measured, not the user (taking it
 *   for the user stopped following by itself, and "Jump to latest" then covered the
 *   controls at the end of a reply);
 * - `reached-end`: moved down into the end;
 * - `none`: anything else.
 */
export function scrollMove(
  last: ScrollPoint,
  now: ScrollPoint,
  fromEnd: number,
  pressed: boolean,
): 'left-end' | 'kept-still' | 'reached-end' | 'none' {
  if (now.top < last.top - 4 && fromEnd > AT_BOTTOM_PX) {
    return pressed || now.height === last.height ? 'left-end' : 'kept-still';
  }
  if (now.top > last.top && fromEnd <= AT_BOTTOM_PX) return 'reached-end';
  return 'none';
}

/** Keys that scroll a focused list up. */
const UP_KEYS = new Set(['ArrowUp', 'PageUp', 'Home']);

/**
 * Whether the list follows its end. Only the user stops it, by scrolling up (wheel, keys,
 * touch, the scrollbar, the browser's find), and scrolling back down to the end starts it
 * again: content growing below never moves the view up, and a correction above it while
 * at the end leaves the end in view.
 *
 * A wheel or key turned up stops it at once, before the view moves: the browser scrolls
 * those smoothly, over several frames, and a scroll to the end meanwhile (the next chunk
 * of a streaming reply) would cancel that scroll, so the user could never leave the end.
 * `keepEnd` reads `followingNow`, so no render has to come first.
 */
function useFollowing() {
  const [following, setFollowing] = useState(true);
  const followingNow = useRef(true);
  const [scroller, setScroller] = useState<HTMLDivElement | null>(null);
  const scrollerNow = useRef<HTMLDivElement | null>(null);
  const setTo = useCallback((value: boolean) => {
    followingNow.current = value;
    setFollowing(value);
  }, []);
  const follow = useCallback(() => setTo(true), [setTo]);
  const unfollow = useCallback(() => setTo(false), [setTo]);
  /** The content or its height changed: while following, the end stays in view. */
  const keepEnd = useCallback(() => {
    const element = scrollerNow.current;
    if (followingNow.current && element) element.scrollTop = element.scrollHeight;
  }, []);
  useEffect(() => {
    if (!scroller) return;
    let last = { top: scroller.scrollTop, height: scroller.scrollHeight };
    // A pointer (on the scrollbar) or a finger is down on the list.
    let pressed = false;
    const press = () => {
      pressed = true;
    };
    const release = () => {
      pressed = false;
    };
    const onScroll = () => {
      const now = { top: scroller.scrollTop, height: scroller.scrollHeight };
      const fromEnd = now.height - now.top - scroller.clientHeight;
      const move = scrollMove(last, now, fromEnd, pressed);
      last = now;
      if (move === 'left-end') unfollow();
      // Moving down into the end (the scrollbar, a wheel, End): follow again.
      else if (move === 'reached-end' && !followingNow.current) follow();
      // virtua keeping what is shown still while a turn is measured: the end stays.
      else if (move === 'kept-still') keepEnd();
    };
    scroller.addEventListener('pointerdown', press);
    scroller.addEventListener('touchstart', press, { passive: true });
    window.addEventListener('pointerup', release);
    window.addEventListener('touchend', release);
    window.addEventListener('touchcancel', release);
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
      scroller.removeEventListener('pointerdown', press);
      scroller.removeEventListener('touchstart', press);
      window.removeEventListener('pointerup', release);
      window.removeEventListener('touchend', release);
      window.removeEventListener('touchcancel', release);
    };
  }, [scroller, follow, unfollow, keepEnd]);
  const scrollerRef = useCallback((element: HTMLDivElement | null) => {
    scrollerNow.current = element;
    setScroller(element);
  }, []);
  // The element as state (listeners go on the one the list mounts) and as a ref (virtua's `scrollRef`).
  return { following, follow, unfollow, keepEnd, scroller, scrollerNow, scrollerRef };
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
 * virtua's `shift`: true in the render where turns appeared above the first one (an older
 * page), so the view stays still; false for every other change (a turn added at the end).
 */
function usePrepended(turns: readonly TurnView[]): boolean {
  const first = turns[0]?.key;
  const [seen, setSeen] = useState({ first, count: turns.length, shift: false });
  if (first === seen.first && turns.length === seen.count) return seen.shift;
  // Adjusted while rendering (React's pattern for state from the previous render).
  const shift = seen.first !== undefined && first !== seen.first && turns.findIndex((turn) => turn.key === seen.first) > 0;
  setSeen({ first, count: turns.length, shift });
  return shift;
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
