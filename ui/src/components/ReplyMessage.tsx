import { Chat, useChat } from '@ai-sdk/react';
import { useEffect, useMemo, useState } from 'react';
import type { ReplyView } from '../chat/conversation';
import type { ChatMessage } from '../chat/messages';
import { retryingAfter, type Retrying } from '../chat/retrying';
import type { ExecutionSource } from '../chat/transport';
import { ExecutionTransport, sdkToChat, type SdkMessage } from '../chat/transport';
import { useExecutionSource } from './ExecutionSourceContext';
import { MessageView } from './MessageView';

/**
 * A reply's message: while it is written, through its own AI SDK `Chat` (one per
 * execution, see `ExecutionTransport`); once it ended, as the conversation holds it.
 */
export function ReplyMessage({ reply }: { reply: ReplyView }) {
  if (!reply.live || reply.executionId === undefined) return <MessageView message={reply.message} isLive={reply.live} />;
  return <LiveMessage key={reply.executionId} executionId={reply.executionId} messageId={reply.messageId} base={reply.base ?? 0} />;
}

interface LiveMessageProps {
  executionId: string;
  messageId: string;
  /** The snapshot the execution's stream starts from: a new one means starting over. */
  base: number;
}

function LiveMessage({ executionId, messageId, base }: LiveMessageProps) {
  const source = useExecutionSource();
  const [chat] = useState(
    () => new Chat<SdkMessage>({ id: executionId, transport: new ExecutionTransport(source, executionId, messageId) }),
  );
  const { messages } = useChat({ chat });
  useEffect(() => {
    // A stream replays the execution from its start: resuming again rebuilds the message.
    void chat.resumeStream();
  }, [chat, base]);
  useEffect(() => () => void chat.stop(), [chat]);
  // Before its first chunk the reply is empty (the same object, so the view stays memoized).
  const empty = useMemo<ChatMessage>(() => ({ id: messageId, role: 'assistant', parts: [] }), [messageId]);
  const retrying = useRetrying(source, executionId, base);
  const last = messages.at(-1);
  const message = last ? sdkToChat(last) : empty;
  return <MessageView message={message} isLive retrying={retrying} />;
}

/**
 * The execution's transient "retrying" notice: its chunks as `LiveReplies` demultiplexed
 * them (in memory, no second listener), from a `data-retrying` chunk until the next
 * content chunk or the terminal. Transient chunks are never folded into the message.
 */
function useRetrying(source: ExecutionSource, executionId: string, base: number): Retrying | undefined {
  const [retrying, setRetrying] = useState<Retrying>();
  useEffect(() => {
    let current: Retrying | undefined;
    const set = (next: Retrying | undefined) => {
      if (next === current) return;
      current = next;
      setRetrying(next);
    };
    const stop = source.follow(executionId, {
      begin: () => set(undefined),
      chunk: (chunk) => set(retryingAfter(current, chunk, Date.now())),
      end: () => set(undefined),
    });
    return () => {
      stop?.();
      setRetrying(undefined);
    };
  }, [source, executionId, base]);
  return retrying;
}
