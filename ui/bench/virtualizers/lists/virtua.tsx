import { useImperativeHandle, useLayoutEffect, useRef, useState } from 'react';
import { VList, type VListHandle } from 'virtua';
import { Message } from '../messages';
import { useFollowing, type ChatListProps } from './chatList';

/**
 * virtua's `VList` as its chat example uses it: `shift` while older messages are
 * prepended, `scrollToIndex(last, { align: 'end' })` to open at the end and, while
 * following, after every change and every resize (a streamed reply growing).
 */
export default function VirtuaList({ messages, prepended, ref }: ChatListProps) {
  const list = useRef<VListHandle>(null);
  const frame = useRef<HTMLDivElement>(null);
  const [scroller, setScroller] = useState<HTMLElement | null>(null);
  const following = useFollowing(scroller);
  const last = messages.length - 1;

  useLayoutEffect(() => {
    // VList renders the scrolling element itself, as the frame's only child.
    setScroller((frame.current?.firstElementChild as HTMLElement | null) ?? null);
  }, []);

  useLayoutEffect(() => {
    if (following.current) list.current?.scrollToIndex(last, { align: 'end' });
  }, [messages, last, following]);

  useImperativeHandle(
    ref,
    () => ({
      scroller: () => scroller,
      scrollToEnd: () => {
        following.current = true;
        list.current?.scrollToIndex(last, { align: 'end' });
      },
    }),
    [scroller, following, last],
  );

  return (
    <div ref={frame} className="frame">
      <VList
        ref={list}
        className="scroller"
        data={messages}
        shift={prepended}
        bufferSize={600}
        onResize={() => {
          if (following.current) list.current?.scrollToIndex(last, { align: 'end' });
        }}
      >
        {(message) => (
          <div key={message.key} className="row">
            <Message message={message} />
          </div>
        )}
      </VList>
    </div>
  );
}
