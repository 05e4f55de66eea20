import { memo, useEffect, useState } from 'react';
import { isApiError } from '../backend/backend';
import { errorHint, errorTitle } from '../backend/describe';
import {
  endedEarlyReason,
  interruptedForMessage,
  isAwaitingApproval,
  messageStatus,
  blockText,
  replyBlocks,
  stoppedHint,
  stoppedLabel,
  yieldedToSteering,
  type ChatMessage,
  type ReplyBlock,
} from '../chat/messages';
import { replyCost, type CompactionMarker } from '../chat/replyNotes';
import { resourceAttachments } from '../chat/mcpContent';
import { secondsLeft, type Retrying } from '../chat/retrying';
import { waitingApprovalIds, type ToolProgressByCall } from '../chat/tools';
import type { ApiError, MessageStatus, StatusReason } from '../protocol.gen';
import { useAgentSession } from './AgentSessionContext';
import { ElicitationCard } from './ElicitationCard';
import { Markdown } from './LazyMarkdown';
import { SamplingCardView } from './SamplingCard';
import { MessageFiles } from './MessageFiles';
import { AgentPlan } from './AgentPlan';
import { MessageTime } from './MessageTime';
import { MessageResources } from './ResourceViews';
import { PendingApprovals } from './PendingApprovals';
import { ReplyUsageFooter } from './ReplyUsageFooter';
import { ToolCard } from './ToolCard';

type Part = ChatMessage['parts'][number];
type FilePart = Extract<Part, { type: 'file' }>;

interface MessageViewProps {
  message: ChatMessage;
  /** The reply currently streaming: the only message that re-renders per chunk. */
  isLive: boolean;
  /** A live reply whose provider is being retried (transient, never stored). */
  retrying?: Retrying | undefined;
  /** A live reply's running tool calls' progress (transient, never stored). */
  progress?: ToolProgressByCall | undefined;
}

/** One message of the conversation. Memoized: finished messages never re-render while a reply streams. */
export const MessageView = memo(function MessageView({ message, isLive, retrying, progress }: MessageViewProps) {
  const status = messageStatus(message, isLive);
  return (
    <article className={`message ${message.role}`} data-testid="message" data-role={message.role} data-status={status} data-message-id={message.id}>
      {message.role === 'user' ? (
        <UserBody message={message} />
      ) : (
        <AssistantBody message={message} status={status} isLive={isLive} retrying={retrying} progress={progress} />
      )}
    </article>
  );
});

function UserBody({ message }: { message: ChatMessage }) {
  const text = message.parts.map((part) => (part.type === 'text' ? part.text : '')).join('');
  const files = message.parts.filter((part): part is FilePart => part.type === 'file');
  const resources = resourceAttachments(message.parts);
  return (
    <>
      <div className="bubble">
        <MessageFiles files={files} />
        <MessageResources resources={resources} />
        {text !== '' && (
          <div className="message-text user-text" data-testid="message-text">
            {text}
          </div>
        )}
      </div>
      <MessageTime createdAt={message.createdAt} />
    </>
  );
}

interface AssistantBodyProps {
  message: ChatMessage;
  status: MessageStatus;
  isLive: boolean;
  retrying: Retrying | undefined;
  progress: ToolProgressByCall | undefined;
}

function AssistantBody({ message, status, isLive, retrying, progress }: AssistantBodyProps) {
  const parts = message.parts;
  const blocks = replyBlocks(parts);
  const sources = parts.filter((part): part is Extract<Part, { type: 'source-url' }> => part.type === 'source-url');
  const errors = parts.filter((part) => part.type === 'data-error').map((part) => ('data' in part ? part.data : undefined));
  const metadata = message.metadata;
  const waiting = isLive && blocks.length === 0;
  const endedEarly = endedEarlyReason(message, isLive);
  const cost = isLive ? undefined : replyCost(metadata);

  return (
    <div className="reply">
      {isLive && retrying && <RetryingNotice retrying={retrying} />}
      {blocks.map((block, index) => (
        <ReplyBlockView key={blockKey(block, index)} block={block} isLive={isLive} progress={progress} />
      ))}
      {waiting && <TypingIndicator />}
      {sources.length > 0 && (
        <ul className="sources" aria-label="Sources">
          {sources.map((source) => (
            <li key={source.sourceId}>
              <a href={source.url} target="_blank" rel="noreferrer">
                {source.title ?? source.url}
              </a>
            </li>
          ))}
        </ul>
      )}
      {errors.map((error, index) => (
        <ErrorCard key={index} error={error} />
      ))}
      {status === 'error' && errors.length === 0 && <ErrorCard error={undefined} reason={metadata?.statusReason} />}
      {isAwaitingApproval(message, isLive) && <PendingApprovals approvalIds={waitingApprovalIds(message)} />}
      {endedEarly !== undefined && <StoppedMarker reason={endedEarly} forMessage={endedEarly === 'user_stop' && interruptedForMessage(message)} />}
      {yieldedToSteering(message, isLive) && (
        <div className="steered-note small muted" data-testid="message-steered">
          Yielded to your steering message.
        </div>
      )}
      {(metadata?.model || metadata?.providerName || cost || message.createdAt) && (
        <div className="reply-footer">
          <MessageTime createdAt={message.createdAt} />
          {(metadata?.model || metadata?.providerName) && (
            <span data-testid="message-model">{[metadata.model, metadata.providerName].filter(Boolean).join(' · ')}</span>
          )}
          {cost && (
            <span className="reply-cost" data-testid="message-cost" title="What this turn cost, as the agent reported it">
              {cost}
            </span>
          )}
        </div>
      )}
      {!isLive && <ReplyUsageFooter messageId={message.id} />}
    </div>
  );
}

function blockKey(block: ReplyBlock, index: number): string {
  if (block.kind === 'tool') return `tool:${block.part.toolCallId}`;
  if (block.kind === 'elicitation') return `elicitation:${block.card.elicitationId}`;
  if (block.kind === 'sampling') return `sampling:${block.card.samplingId}`;
  return `${block.kind}:${index}`;
}

interface ReplyBlockViewProps {
  block: ReplyBlock;
  isLive: boolean;
  progress: ToolProgressByCall | undefined;
}

function ReplyBlockView({ block, isLive, progress }: ReplyBlockViewProps) {
  switch (block.kind) {
    case 'reasoning':
      return <ThinkingBlock text={block.part.text} streaming={isLive && block.part.state === 'streaming'} />;
    case 'tool':
      return <ToolCard part={block.part} isLive={isLive} progress={progress?.get(block.part.toolCallId)} />;
    case 'file':
      return <MessageFiles files={[block.part]} />;
    case 'compaction':
      return <CompactionMarkerView marker={block.marker} />;
    case 'elicitation':
      return <ElicitationCard card={block.card} isLive={isLive} />;
    case 'sampling':
      return <SamplingCardView card={block.card} isLive={isLive} />;
    case 'plan':
      return <AgentPlan entries={block.entries} />;
    case 'steer':
      return (
        <div className={`steer-note small muted ${block.note.state}`} data-testid="message-steer-note" data-state={block.note.state}>
          {block.note.text}
        </div>
      );
    case 'text':
      // One markdown text: a continued reply's new part goes on mid-word or mid-list
      // after the kept one (see `blockText`).
      return (
        <div className="message-text markdown" data-testid="message-text">
          <Markdown text={blockText(block)} live={isLive} animating={isLive && block.parts.at(-1)?.state === 'streaming'} />
        </div>
      );
  }
}

function ThinkingBlock({ text, streaming }: { text: string; streaming: boolean }) {
  return (
    <details className="thinking" data-testid="message-thinking">
      <summary>{streaming ? 'Thinking…' : 'Thinking'}</summary>
      <div className="thinking-text">{text}</div>
    </details>
  );
}

/** "Retrying in N s": counts down from the retry's delay. */
function RetryingNotice({ retrying }: { retrying: Retrying }) {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 250);
    return () => clearInterval(timer);
  }, [retrying]);
  const seconds = secondsLeft(retrying, Math.max(now, retrying.since));
  return (
    <div className="retrying-notice small muted" data-testid="reply-retrying" role="status">
      {seconds > 0 ? `Retrying in ${seconds} s` : 'Retrying now'}
      {retrying.attempt > 0 && ` (attempt ${retrying.attempt})`}
      {retrying.reason && ` — ${retrying.reason}`}
    </div>
  );
}

function TypingIndicator() {
  return (
    <div className="typing" aria-label="Waiting for the model">
      <span />
      <span />
      <span />
    </div>
  );
}

/** A `data-error` part: the error that ended (or interrupted) this reply. */
function ErrorCard({ error, reason }: { error: unknown; reason?: string }) {
  const known: ApiError = isApiError(error)
    ? error
    : { kind: 'internal', message: reason ? `The reply ended with an error (${reason}).` : 'The reply ended with an error.', retryable: true };
  return (
    <div className="error-card" data-testid="message-error" data-code={known.code} role="alert">
      <div className="error-card-title">{errorTitle(known)}</div>
      <div className="error-card-message">{known.message}</div>
      <div className="error-card-hint">{errorHint(known)}</div>
      {known.code === 'resume_failed' && <FreshSessionButton />}
    </div>
  );
}

/** Under a failed resume: forget the agent's session so the next message starts a new one. */
function FreshSessionButton() {
  const session = useAgentSession();
  const [state, setState] = useState<{ busy: boolean; error?: ApiError }>({ busy: false });
  if (!session) return null;
  if (!session.resumable) {
    return (
      <p className="small" data-testid="agent-reset-done">
        Your next message starts a fresh Claude Code session. The conversation here stays as it is.
      </p>
    );
  }
  const reset = () => {
    setState({ busy: true });
    void session.reset().then((error) => setState(error ? { busy: false, error } : { busy: false }));
  };
  return (
    <div className="error-card-actions">
      <button type="button" className="button small" data-testid="agent-reset" disabled={state.busy} onClick={reset}>
        {state.busy ? 'Starting fresh…' : 'Start a fresh Claude Code session'}
      </button>
      <span className="small muted">The messages here are kept; the agent starts without their memory.</span>
      {state.error && <span className="field-error">{state.error.message}</span>}
    </div>
  );
}

/** Where the agent compacted its context: older turns are summarized from here on. */
function CompactionMarkerView({ marker }: { marker: CompactionMarker }) {
  return (
    <div className={`compaction-marker ${marker.state}`} data-testid="message-compaction" data-state={marker.state} role="note">
      <span className="compaction-label">{marker.label}</span>
      {marker.detail && <span className="compaction-detail">{marker.detail}</span>}
    </div>
  );
}

/** Under a reply that ended before its natural end: why, and what the user can do. */
/** `forMessage`: stopped by Interrupt, for the user's next message (its marker says so too). */
function StoppedMarker({ reason, forMessage }: { reason: StatusReason; forMessage: boolean }) {
  return (
    <div className="stopped" data-testid="message-stopped" data-reason={reason} data-interrupted={forMessage || undefined}>
      <span className="stopped-label">{forMessage ? 'Interrupted' : stoppedLabel(reason)}</span>
      <span className="stopped-hint">
        {forMessage ? 'You interrupted this reply to send your message. The text so far is kept; Continue picks up where it ended.' : stoppedHint(reason)}
      </span>
    </div>
  );
}
