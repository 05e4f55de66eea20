import { useState, type KeyboardEvent } from 'react';
import type { ModelRef, Provider } from '../protocol.gen';
import { ModelSelect } from './ModelSelect';

interface ComposerProps {
  /** A turn is running in this topic: messages go to the inbox (or interrupt it). */
  busy: boolean;
  stopping: boolean;
  disabled?: boolean;
  /** Text put back after a message could not be sent or queued. */
  restoredText?: { text: string } | undefined;
  providers: Provider[];
  models: ModelRef[];
  onModelsChange: (models: ModelRef[]) => void;
  onSend: (text: string) => void;
  onQueue: (text: string) => void;
  onSteer: (text: string) => void;
  onInterrupt: (text: string) => void;
  onStop: () => void;
}

/**
 * The message box. Idle: Enter sends. While a reply is written: Enter queues the
 * message to run next; Steer makes the reply yield to it at its next step; Interrupt
 * stops the reply now and sends it. Shift+Enter adds a line.
 */
export function Composer(props: ComposerProps) {
  const { busy, stopping, disabled, restoredText, providers, models, onModelsChange, onStop } = props;
  const [text, setText] = useState('');
  const [restored, setRestored] = useState(restoredText);
  if (restoredText !== restored) {
    // Adjusting state to a changed prop during render, as React recommends over an effect.
    setRestored(restoredText);
    if (restoredText && !text) setText(restoredText.text);
  }

  const submit = (action: (text: string) => void) => {
    const value = text.trim();
    if (!value || disabled) return;
    action(value);
    setText('');
  };
  const primary = busy ? props.onQueue : props.onSend;

  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.nativeEvent.isComposing) {
      event.preventDefault();
      submit(primary);
    }
  };

  const empty = text.trim() === '';
  return (
    <form
      className="composer"
      onSubmit={(event) => {
        event.preventDefault();
        submit(primary);
      }}
    >
      <textarea
        data-testid="composer-input"
        value={text}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={onKeyDown}
        placeholder={
          busy
            ? 'A reply is being written — Enter queues your message to run next, Shift+Enter for a new line'
            : 'Message Colloquy — Enter to send, Shift+Enter for a new line'
        }
        rows={1}
        aria-label="Message"
        disabled={disabled}
      />
      <div className="composer-bar">
        <ModelSelect providers={providers} value={models} onChange={onModelsChange} disabled={disabled} />
        <div className="composer-actions">
          {busy ? (
            <>
              <button
                type="button"
                className="button small"
                data-testid="composer-interrupt"
                disabled={disabled || empty || stopping}
                title="Stop the reply now (its text is kept) and send this message"
                onClick={() => submit(props.onInterrupt)}
              >
                Interrupt
              </button>
              <button
                type="button"
                className="button small"
                data-testid="composer-steer"
                disabled={disabled || empty}
                title="Let the reply finish its current step, then answer this message"
                onClick={() => submit(props.onSteer)}
              >
                Steer
              </button>
              <button
                type="submit"
                className="button primary small"
                data-testid="composer-queue"
                disabled={disabled || empty}
                title="Send this message when the reply has finished"
              >
                Queue
              </button>
              <button type="button" className="button stop small" data-testid="stop-button" onClick={onStop} disabled={stopping}>
                {stopping ? 'Stopping…' : 'Stop'}
              </button>
            </>
          ) : (
            <button type="submit" className="button primary" data-testid="send-button" disabled={disabled || empty}>
              Send
            </button>
          )}
        </div>
      </div>
    </form>
  );
}
