import { useState, type KeyboardEvent } from 'react';

interface ComposerProps {
  /** A reply is streaming: Stop replaces Send. */
  streaming: boolean;
  stopping: boolean;
  disabled?: boolean;
  /** Text put back after a message could not be sent. */
  restoredText?: { text: string } | undefined;
  onSend: (text: string) => void;
  onStop: () => void;
}

/** The message box: Enter sends, Shift+Enter adds a line. */
export function Composer({ streaming, stopping, disabled, restoredText, onSend, onStop }: ComposerProps) {
  const [text, setText] = useState('');
  const [restored, setRestored] = useState(restoredText);
  if (restoredText !== restored) {
    // Adjusting state to a changed prop during render, as React recommends over an effect.
    setRestored(restoredText);
    if (restoredText && !text) setText(restoredText.text);
  }

  const send = () => {
    const value = text.trim();
    if (!value || streaming || disabled) return;
    onSend(value);
    setText('');
  };

  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.nativeEvent.isComposing) {
      event.preventDefault();
      send();
    }
  };

  return (
    <form
      className="composer"
      onSubmit={(event) => {
        event.preventDefault();
        send();
      }}
    >
      <textarea
        data-testid="composer-input"
        value={text}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={onKeyDown}
        placeholder="Message Colloquy — Enter to send, Shift+Enter for a new line"
        rows={1}
        aria-label="Message"
        disabled={disabled}
      />
      {streaming ? (
        <button type="button" className="button stop" data-testid="stop-button" onClick={onStop} disabled={stopping}>
          {stopping ? 'Stopping…' : 'Stop'}
        </button>
      ) : (
        <button type="submit" className="button primary" data-testid="send-button" disabled={disabled || text.trim() === ''}>
          Send
        </button>
      )}
    </form>
  );
}
