import type { ReplyView } from '../chat/conversation';
import { MessageView } from './MessageView';

/**
 * A reply's message. A live one is what the topic's stream has folded so far
 * (`LiveReplies`): its parts, the "retrying" notice and tool progress come from that one
 * state, re-rendered at most once per the session's render interval.
 */
export function ReplyMessage({ reply }: { reply: ReplyView }) {
  return <MessageView message={reply.message} isLive={reply.live} retrying={reply.retrying} progress={reply.progress} />;
}
