import { code } from '@streamdown/code';
import { memo, useEffect, useState } from 'react';
import { Streamdown } from 'streamdown';
import { isApiError } from '../backend/backend';
import { errorHint, errorTitle } from '../backend/describe';
import { messageStatus, stoppedHint, stoppedLabel, type ChatMessage } from '../chat/messages';
import { secondsLeft, type Retrying } from '../chat/retrying';
import type { ApiError, MessageStatus } from '../protocol.gen';

const PLUGINS = { code };
// Copy buttons on code blocks only: the other controls and the link-confirmation modal
// need Tailwind styles we do not ship.
const CONTROLS = { code: true, table: false, mermaid: false, image: false };
const LINK_SAFETY = { enabled: false };

type Part = ChatMessage['parts'][number];

interface MessageViewProps {
  message: ChatMessage;
  /** The reply currently streaming: the only message that re-renders per chunk. */
  isLive: boolean;
  /** A live reply whose provider is being retried (transient, never stored). */
  retrying?: Retrying | undefined;
}

/** One message of the conversation. Memoized: finished messages never re-render while a reply streams. */
export const MessageView = memo(function MessageView({ message, isLive, retrying }: MessageViewProps) {
  const status = messageStatus(message, isLive);
  return (
    <article className={`message ${message.role}`} data-testid="message" data-role={message.role} data-status={status} data-message-id={message.id}>
      {message.role === 'user' ? <UserBody message={message} /> : <AssistantBody message={message} status={status} isLive={isLive} retrying={retrying} />}
    </article>
  );
});

function UserBody({ message }: { message: ChatMessage }) {
  const text = message.parts.map((part) => (part.type === 'text' ? part.text : '')).join('');
  return (
    <div className="bubble">
      <div className="message-text user-text" data-testid="message-text">
        {text}
      </div>
    </div>
  );
}

interface AssistantBodyProps {
  message: ChatMessage;
  status: MessageStatus;
  isLive: boolean;
  retrying: Retrying | undefined;
}

function AssistantBody({ message, status, isLive, retrying }: AssistantBodyProps) {
  const parts = message.parts;
  const reasoning = parts.filter((part): part is Extract<Part, { type: 'reasoning' }> => part.type === 'reasoning');
  const texts = parts.filter((part): part is Extract<Part, { type: 'text' }> => part.type === 'text');
  const sources = parts.filter((part): part is Extract<Part, { type: 'source-url' }> => part.type === 'source-url');
  const errors = parts.filter((part) => part.type === 'data-error').map((part) => ('data' in part ? part.data : undefined));
  const metadata = message.metadata;
  const waiting = isLive && texts.every((part) => part.text === '') && reasoning.length === 0;

  return (
    <div className="reply">
      {reasoning.map((part, index) => (
        <ThinkingBlock key={index} text={part.text} streaming={part.state === 'streaming'} />
      ))}
      {isLive && retrying && <RetryingNotice retrying={retrying} />}
      {waiting && <TypingIndicator />}
      {texts.some((part) => part.text !== '') && (
        <div className="message-text markdown" data-testid="message-text">
          {texts.map((part, index) => (
            <Streamdown
              key={index}
              mode={isLive ? 'streaming' : 'static'}
              isAnimating={isLive && part.state === 'streaming'}
              plugins={PLUGINS}
              controls={CONTROLS}
              linkSafety={LINK_SAFETY}
              lineNumbers={false}
            >
              {part.text}
            </Streamdown>
          ))}
        </div>
      )}
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
      {status === 'paused' && <StoppedMarker reason={metadata?.statusReason} />}
      {(metadata?.model || metadata?.providerName) && (
        <div className="reply-footer" data-testid="message-model">
          {[metadata.model, metadata.providerName].filter(Boolean).join(' · ')}
        </div>
      )}
    </div>
  );
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
    <div className="error-card" data-testid="message-error" role="alert">
      <div className="error-card-title">{errorTitle(known)}</div>
      <div className="error-card-message">{known.message}</div>
      <div className="error-card-hint">{errorHint(known)}</div>
    </div>
  );
}

function StoppedMarker({ reason }: { reason: string | undefined }) {
  return (
    <div className="stopped" data-testid="message-stopped" data-reason={reason ?? 'user_stop'}>
      <span className="stopped-label">{stoppedLabel(reason)}</span>
      <span className="stopped-hint">{stoppedHint(reason)}</span>
    </div>
  );
}
