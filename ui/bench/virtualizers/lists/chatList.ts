import { useEffect, useRef, type Ref, type RefObject } from 'react';
import type { ChatMessage } from '../messages';

/** What the driver needs of a list, whichever library draws it. */
export interface ChatListHandle {
  /** The element that scrolls. */
  scroller(): HTMLElement | null;
  /** Back to the end, following it again (the app's "Jump to latest"). */
  scrollToEnd(): void;
}

export interface ChatListProps {
  messages: readonly ChatMessage[];
  /** The last change added messages above the first one (an older page). */
  prepended: boolean;
  ref: Ref<ChatListHandle>;
}

/** Within this many pixels of the end counts as "at the bottom", as in the app. */
export const AT_BOTTOM_PX = 48;

/**
 * Whether the list follows its end: the app's rule (ui/src/components/MessageList.tsx).
 * Only scrolling up stops it; reaching the end again starts it. A ref, read by the
 * library's callbacks, so following costs no render.
 */
export function useFollowing(scroller: HTMLElement | null): RefObject<boolean> {
  const following = useRef(true);
  useEffect(() => {
    if (!scroller) return;
    let lastTop = scroller.scrollTop;
    const onScroll = () => {
      const top = scroller.scrollTop;
      const fromEnd = scroller.scrollHeight - top - scroller.clientHeight;
      if (top < lastTop - 4 && fromEnd > AT_BOTTOM_PX) following.current = false;
      else if (fromEnd <= AT_BOTTOM_PX) following.current = true;
      lastTop = top;
    };
    scroller.addEventListener('scroll', onScroll, { passive: true });
    return () => scroller.removeEventListener('scroll', onScroll);
  }, [scroller]);
  return following;
}
