import { Chat, useChat } from '@ai-sdk/react';
import { useEffect, useMemo, useState } from 'react';
import type { ReplyView } from '../chat/conversation';
import type { ChatMessage } from '../chat/messages';
import { retryingAfter, type Retrying } from '../chat/retrying';
import { answeredApprovals, progressAfter, withAnsweredApprovals, type ToolProgressByCall } from '../chat/tools';
import type { ToolApproval } from '../protocol.gen';
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
  const { retrying, progress, answers } = useLiveExtras(source, executionId, base);
  const last = messages.at(-1);
  const message = last ? withAnsweredApprovals(sdkToChat(last), answers) : empty;
  return <MessageView message={message} isLive retrying={retrying} progress={progress} />;
}

interface LiveExtras {
  /** The transient "retrying" notice. */
  retrying: Retrying | undefined;
  /** Running tool calls' progress (transient `data-tool-progress` chunks). */
  progress: ToolProgressByCall;
  /** Answers the execution's snapshot already holds (no chunk carries them). */
  answers: ReadonlyMap<string, ToolApproval>;
}

const NO_PROGRESS: ToolProgressByCall = new Map();
const NO_ANSWERS: ReadonlyMap<string, ToolApproval> = new Map();
const NOTHING_EXTRA: LiveExtras = { retrying: undefined, progress: NO_PROGRESS, answers: NO_ANSWERS };

/**
 * What a live reply shows beside its message, read from the execution's chunks as
 * `LiveReplies` demultiplexed them (in memory, no second listener): the "retrying" notice
 * (from a `data-retrying` chunk until the next content chunk or the terminal), tool
 * progress (until the call's output), and the approval answers of the snapshot the
 * stream started from. Transient chunks are never folded into the message.
 */
function useLiveExtras(source: ExecutionSource, executionId: string, base: number): LiveExtras {
  const [extras, setExtras] = useState<LiveExtras>(NOTHING_EXTRA);
  useEffect(() => {
    let current = NOTHING_EXTRA;
    const set = (next: LiveExtras) => {
      if (next.retrying === current.retrying && next.progress === current.progress && next.answers === current.answers) return;
      current = next;
      setExtras(next);
    };
    const stop = source.follow(executionId, {
      begin: (message) => {
        const answers = answeredApprovals(message);
        set({ retrying: undefined, progress: NO_PROGRESS, answers: answers.size === 0 ? NO_ANSWERS : answers });
      },
      chunk: (chunk) =>
        set({
          ...current,
          retrying: retryingAfter(current.retrying, chunk, Date.now()),
          progress: progressAfter(current.progress, chunk),
        }),
      end: () => set({ ...current, retrying: undefined, progress: NO_PROGRESS }),
    });
    return () => {
      stop?.();
      setExtras(NOTHING_EXTRA);
    };
  }, [source, executionId, base]);
  return extras;
}
