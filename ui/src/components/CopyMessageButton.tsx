import { useEffect, useState } from 'react';
import { messageMarkdown, type ChatMessage } from '../chat/messages';

type CopyState = 'idle' | 'copied' | 'failed';

/** "Copy": the whole message as Markdown on the clipboard, then "Copied" for a moment. */
export function CopyMessageButton({ message }: { message: ChatMessage }) {
  const [state, setState] = useState<CopyState>('idle');
  useEffect(() => {
    if (state === 'idle') return;
    const timer = setTimeout(() => setState('idle'), 1500);
    return () => clearTimeout(timer);
  }, [state]);
  const markdown = messageMarkdown(message);
  if (markdown === '') return null;
  const copy = () => {
    navigator.clipboard.writeText(markdown).then(
      () => setState('copied'),
      () => setState('failed'),
    );
  };
  return (
    <button
      type="button"
      className="button ghost small"
      data-testid="message-copy"
      data-state={state}
      title={state === 'failed' ? 'The clipboard refused the text: select it and copy instead' : 'Copy the whole message as Markdown'}
      onClick={copy}
    >
      {state === 'copied' ? 'Copied' : state === 'failed' ? 'Copy failed' : 'Copy'}
    </button>
  );
}
