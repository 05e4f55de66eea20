import { useCallback, useImperativeHandle, useRef, useState } from 'react';
import { Virtuoso, type VirtuosoHandle } from 'react-virtuoso';
import { Message, type ChatMessage } from '../messages';
import { AT_BOTTOM_PX, useFollowing, type ChatListProps } from './chatList';

/** Room below Virtuoso's first index for prepended pages. */
const FIRST_INDEX = 1_000_000_000;

/**
 * react-virtuoso configured as the app's MessageList: opens at the end, `followOutput`
 * and `totalListHeightChanged` keep the end in view while following, `firstItemIndex`
 * keeps the view still when older messages are prepended.
 */
export default function VirtuosoList(props: ChatListProps) {
  return <ConfiguredVirtuoso {...props} skipAnimationFrame={false} />;
}

/**
 * The same with `skipAnimationFrameInResizeObserver`: a resize is acted on in the
 * ResizeObserver's callback, before the paint, not in the next animation frame.
 */
export function VirtuosoSyncResize(props: ChatListProps) {
  return <ConfiguredVirtuoso {...props} skipAnimationFrame />;
}

function ConfiguredVirtuoso({ messages, ref, skipAnimationFrame }: ChatListProps & { skipAnimationFrame: boolean }) {
  const list = useRef<VirtuosoHandle>(null);
  const [scroller, setScroller] = useState<HTMLElement | null>(null);
  const following = useFollowing(scroller);
  const firstItemIndex = usePrependAnchor(messages);
  const scrollerRef = useCallback((element: HTMLElement | Window | null) => setScroller(element instanceof HTMLElement ? element : null), []);

  useImperativeHandle(
    ref,
    () => ({
      scroller: () => scroller,
      scrollToEnd: () => {
        following.current = true;
        list.current?.scrollToIndex({ index: 'LAST', align: 'end', behavior: 'auto' });
      },
    }),
    [scroller, following],
  );

  return (
    <Virtuoso
      ref={list}
      scrollerRef={scrollerRef}
      className="scroller"
      data={messages}
      firstItemIndex={firstItemIndex}
      initialTopMostItemIndex={{ index: 'LAST', align: 'end' }}
      computeItemKey={(_, message) => message.key}
      itemContent={(_, message) => (
        <div className="row">
          <Message message={message} />
        </div>
      )}
      followOutput={() => (following.current ? 'auto' : false)}
      totalListHeightChanged={() => {
        if (following.current) list.current?.scrollToIndex({ index: 'LAST', align: 'end', behavior: 'auto' });
      }}
      atBottomThreshold={AT_BOTTOM_PX}
      increaseViewportBy={{ top: 800, bottom: 400 }}
      skipAnimationFrameInResizeObserver={skipAnimationFrame}
    />
  );
}

/** The app's `usePrependAnchor`: lowers `firstItemIndex` by the messages prepended. */
function usePrependAnchor(messages: readonly ChatMessage[]): number {
  const key = messages[0]?.key;
  const [anchor, setAnchor] = useState({ key, index: FIRST_INDEX });
  if (key === anchor.key) return anchor.index;
  const at = anchor.key === undefined ? -1 : messages.findIndex((message) => message.key === anchor.key);
  const index = at > 0 ? anchor.index - at : anchor.index;
  setAnchor({ key, index });
  return index;
}
