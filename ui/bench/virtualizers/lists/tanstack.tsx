import { useVirtualizer } from '@tanstack/react-virtual';
import { useImperativeHandle, useLayoutEffect, useRef, useState } from 'react';
import { Message } from '../messages';
import type { ChatListProps } from './chatList';

/**
 * @tanstack/react-virtual's `useVirtualizer` with its end anchoring (`anchorTo: 'end'`:
 * a resize at the end, or items prepended, keep the view; `followOnAppend`: an item
 * added while at the end is scrolled to), and `scrollToEnd` to open at the end.
 */
export default function TanstackList({ messages, ref }: ChatListProps) {
  const scrollerRef = useRef<HTMLDivElement>(null);
  const [scroller, setScroller] = useState<HTMLElement | null>(null);
  // eslint-disable-next-line react-hooks/incompatible-library -- measured as its docs use it
  const virtualizer = useVirtualizer({
    count: messages.length,
    getScrollElement: () => scrollerRef.current,
    estimateSize: () => 200,
    getItemKey: (index) => messages[index].key,
    overscan: 4,
    anchorTo: 'end',
    followOnAppend: true,
  });

  useLayoutEffect(() => {
    setScroller(scrollerRef.current);
    virtualizer.scrollToEnd();
  }, [virtualizer]);

  useImperativeHandle(ref, () => ({ scroller: () => scroller, scrollToEnd: () => virtualizer.scrollToEnd() }), [scroller, virtualizer]);

  const items = virtualizer.getVirtualItems();
  return (
    <div ref={scrollerRef} className="scroller">
      <div style={{ height: virtualizer.getTotalSize(), position: 'relative', width: '100%' }}>
        <div style={{ position: 'absolute', top: 0, left: 0, width: '100%', transform: `translateY(${items[0]?.start ?? 0}px)` }}>
          {items.map((item) => (
            <div key={item.key} data-index={item.index} ref={virtualizer.measureElement} className="row">
              <Message message={messages[item.index]} />
            </div>
          ))}
        </div>
      </div>
    </div>
  );
}
