import { startTransition, useEffect, useState, type ComponentType } from 'react';
import type { MarkdownProps } from './Markdown';

// Streamdown and what it parses with (remark, rehype, parse5, marked, about half of the
// app's script) are a chunk of their own, so that opening a topic does not wait for them:
// the first frame shows each text plain, in paragraphs, and the markdown replaces it once
// the chunk has arrived, in a transition (an input meanwhile is not held up by it). The
// list stays at its end while following, whatever the swap does to the heights.

type MarkdownRenderer = ComponentType<MarkdownProps>;

let renderer: MarkdownRenderer | undefined;
let loading: Promise<MarkdownRenderer> | undefined;
/** Texts shown plain, told when the renderer has loaded. */
const waiting = new Set<(loaded: MarkdownRenderer) => void>();

/** Loads the markdown renderer (once; a failed load is tried again by the next caller). */
export function loadMarkdown(): Promise<MarkdownRenderer> {
  loading ??= import('./Markdown').then(
    (module) => {
      renderer = module.Markdown;
      for (const listener of waiting) listener(module.Markdown);
      waiting.clear();
      return module.Markdown;
    },
    (error: unknown) => {
      loading = undefined;
      throw error;
    },
  );
  return loading;
}

/** `loadMarkdown` once the browser has painted the current frame and is idle. */
export function loadMarkdownAfterPaint(): () => void {
  let idle: number | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const frame = requestAnimationFrame(() => {
    // The frame's paint comes after this callback: a task queued now runs after it.
    timer = setTimeout(() => {
      const load = () => void loadMarkdown().catch(() => {});
      if (typeof requestIdleCallback === 'function') idle = requestIdleCallback(load, { timeout: 200 });
      else load();
    }, 0);
  });
  return () => {
    cancelAnimationFrame(frame);
    if (timer !== undefined) clearTimeout(timer);
    if (idle !== undefined) cancelIdleCallback(idle);
  };
}

/**
 * One text part as markdown (see `Markdown`), or as plain paragraphs until the renderer
 * has loaded. A text mounted after that renders as markdown from its first frame.
 */
export function Markdown(props: MarkdownProps) {
  const [Rendered, setRendered] = useState(() => renderer);
  useEffect(() => {
    if (Rendered) return;
    const show = (loaded: MarkdownRenderer) => startTransition(() => setRendered(() => loaded));
    // Loaded between this text's render and now.
    const loaded = renderer;
    if (loaded) {
      queueMicrotask(() => show(loaded));
      return;
    }
    // Offline or a stale build: the text stays plain; the next text mounted tries again.
    waiting.add(show);
    const cancel = loadMarkdownAfterPaint();
    return () => {
      waiting.delete(show);
      cancel();
    };
  }, [Rendered]);
  return Rendered ? <Rendered {...props} /> : <PlainText text={props.text} />;
}

/**
 * The text as it will read once rendered, near enough for a first frame: paragraphs at
 * blank lines, line breaks kept, in the markdown's typography (so the heights change
 * little when the markdown replaces it).
 */
export function PlainText({ text }: { text: string }) {
  const paragraphs = text.split(/\r?\n(?:[ \t]*\r?\n)+/).filter((paragraph) => paragraph.trim() !== '');
  return (
    <div className="plain-markdown" data-testid="plain-markdown">
      {paragraphs.map((paragraph, index) => (
        <p key={index}>{paragraph}</p>
      ))}
    </div>
  );
}
