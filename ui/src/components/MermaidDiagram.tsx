import { useEffect, useState, useSyncExternalStore } from 'react';
import type { CustomRendererProps } from 'streamdown';
import { drawMermaid, drawnMermaid, type MermaidImage } from './mermaidImage';

type Drawing = { kind: 'drawing' } | { kind: 'drawn'; image: MermaidImage } | { kind: 'failed'; message: string };

/**
 * A ```mermaid fence, drawn as an image once the fence is complete (until then, and
 * beside the image, its source). The image is in the page's light or dark colours, and
 * drawn again when they change. Source that mermaid cannot read shows mermaid's message
 * (where and what it expected) above the source.
 */
export function MermaidDiagram({ code, isIncomplete }: CustomRendererProps) {
  const dark = useDarkPage();
  const [drawing, setDrawing] = useState<Drawing>(() => {
    const image = isIncomplete ? undefined : drawnMermaid(code, dark);
    return image ? { kind: 'drawn', image } : { kind: 'drawing' };
  });
  useEffect(() => {
    if (isIncomplete) return;
    let current = true;
    drawMermaid(code, dark).then(
      (image) => current && setDrawing({ kind: 'drawn', image }),
      (error: unknown) => current && setDrawing({ kind: 'failed', message: errorMessage(error) }),
    );
    return () => {
      current = false;
    };
  }, [code, dark, isIncomplete]);

  const state = isIncomplete ? 'drawing' : drawing.kind;
  return (
    <div className="mermaid-diagram" data-testid="mermaid-diagram" data-state={state}>
      {drawing.kind === 'drawn' ? (
        <div className="mermaid-diagram-image">
          <img src={drawing.image.src} width={drawing.image.width} height={drawing.image.height} alt={drawing.image.alt} />
        </div>
      ) : drawing.kind === 'failed' && !isIncomplete ? (
        <div className="mermaid-diagram-error" role="alert" data-testid="mermaid-diagram-error">
          <strong>This diagram could not be drawn.</strong> Mermaid says:
          <pre>{drawing.message}</pre>
        </div>
      ) : (
        <div className="mermaid-diagram-pending muted small">{isIncomplete ? 'Diagram: drawn when its source is complete' : 'Drawing the diagram…'}</div>
      )}
      <details className="mermaid-diagram-source" open={state !== 'drawn'}>
        <summary>Mermaid source</summary>
        <pre>
          <code>{code}</code>
        </pre>
      </details>
    </div>
  );
}

function errorMessage(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.trim() || 'Mermaid gave no reason.';
}

/** Whether the page is dark now: its background, so it follows any theme setting. */
function useDarkPage(): boolean {
  return useSyncExternalStore(subscribeToPageColours, pageIsDark, () => false);
}

function subscribeToPageColours(onChange: () => void): () => void {
  const media = matchMedia('(prefers-color-scheme: dark)');
  media.addEventListener('change', onChange);
  // A theme chosen in the app shows as an attribute on <html> (a class, data-*, style).
  const observer = new MutationObserver(onChange);
  observer.observe(document.documentElement, { attributes: true });
  return () => {
    media.removeEventListener('change', onChange);
    observer.disconnect();
  };
}

function pageIsDark(): boolean {
  const [r = 255, g = 255, b = 255] = (getComputedStyle(document.documentElement).backgroundColor.match(/[\d.]+/g) ?? []).map(Number);
  // Relative luminance, roughly: below the middle grey is a dark page.
  return 0.2126 * r + 0.7152 * g + 0.0722 * b < 128;
}
