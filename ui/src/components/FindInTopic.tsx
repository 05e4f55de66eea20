import { useCallback, useEffect, useRef, useState, type KeyboardEvent } from 'react';
import { findRanges } from '../search/findInText';
import '../search/search.css';

interface FindInTopicProps {
  onClose: () => void;
}

/** The CSS Custom Highlight API, where the web view has it (Chromium, Safari 17.2+, recent WebKitGTK). */
interface Highlights {
  set(name: string, highlight: unknown): void;
  delete(name: string): void;
}
const highlightApi = (): { highlights: Highlights; Highlight: new (...ranges: Range[]) => unknown } | undefined => {
  const css = (globalThis as { CSS?: { highlights?: Highlights } }).CSS;
  const Highlight = (globalThis as { Highlight?: new (...ranges: Range[]) => unknown }).Highlight;
  return css?.highlights && Highlight ? { highlights: css.highlights, Highlight } : undefined;
};

/** The open conversation's messages, where find-in-topic looks. */
const conversation = () => document.querySelector<HTMLElement>('.main .message-list');

/**
 * Find in the open conversation (Ctrl/Cmd+F): every match highlighted, the current one
 * scrolled into view; Enter / Shift+Enter (or the arrows) go to the next / previous one.
 * Follows the conversation as it changes (a reply streaming in).
 */
export function FindInTopic({ onClose }: FindInTopicProps) {
  const [query, setQuery] = useState('');
  const [ranges, setRanges] = useState<Range[]>([]);
  const [current, setCurrent] = useState(0);
  const input = useRef<HTMLInputElement>(null);

  useEffect(() => {
    input.current?.focus();
    input.current?.select();
  }, []);

  const search = useCallback(() => {
    const root = conversation();
    setRanges(root ? findRanges(root, query) : []);
  }, [query]);

  useEffect(() => {
    let timer = window.setTimeout(search, 0);
    const root = conversation();
    if (!root) return () => window.clearTimeout(timer);
    // Streaming text and newly loaded messages change what there is to find.
    const observer = new MutationObserver(() => {
      window.clearTimeout(timer);
      timer = window.setTimeout(search, 150);
    });
    observer.observe(root, { subtree: true, childList: true, characterData: true });
    return () => {
      observer.disconnect();
      window.clearTimeout(timer);
    };
  }, [search]);

  const index = ranges.length === 0 ? -1 : Math.min(current, ranges.length - 1);

  useEffect(() => {
    const api = highlightApi();
    const currentRange = index >= 0 ? ranges[index] : undefined;
    if (api) {
      api.highlights.set('find-in-topic', new api.Highlight(...ranges));
      if (currentRange) api.highlights.set('find-in-topic-current', new api.Highlight(currentRange));
      else api.highlights.delete('find-in-topic-current');
    }
    currentRange?.startContainer.parentElement?.scrollIntoView({ block: 'center' });
    return () => {
      api?.highlights.delete('find-in-topic');
      api?.highlights.delete('find-in-topic-current');
    };
  }, [ranges, index]);

  const step = (delta: number) => {
    if (ranges.length === 0) return;
    setCurrent((at) => (Math.min(at, ranges.length - 1) + delta + ranges.length) % ranges.length);
  };

  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key === 'Escape') {
      event.preventDefault();
      onClose();
    } else if (event.key === 'Enter' || event.key === 'F3') {
      event.preventDefault();
      step(event.shiftKey ? -1 : 1);
    }
  };

  return (
    <div className="find-bar" role="search" data-testid="find-in-topic" onKeyDown={onKeyDown}>
      <input
        ref={input}
        type="search"
        className="find-input"
        data-testid="find-input"
        placeholder="Find in this conversation"
        aria-label="Find in this conversation"
        value={query}
        onChange={(event) => {
          setQuery(event.target.value);
          setCurrent(0);
        }}
      />
      <span className="small muted find-count" data-testid="find-count" aria-live="polite">
        {query === '' ? '' : ranges.length === 0 ? 'No matches' : `${index + 1} of ${ranges.length}`}
      </span>
      <button type="button" className="button ghost small" aria-label="Previous match" data-testid="find-previous" disabled={ranges.length === 0} onClick={() => step(-1)}>
        ↑
      </button>
      <button type="button" className="button ghost small" aria-label="Next match" data-testid="find-next" disabled={ranges.length === 0} onClick={() => step(1)}>
        ↓
      </button>
      <button type="button" className="button ghost small" aria-label="Close find" onClick={onClose}>
        ✕
      </button>
    </div>
  );
}
