import { useEffect, useState, useSyncExternalStore } from 'react';
import type { CustomRendererProps } from 'streamdown';
import { onThemeChange, resolvedTheme } from '../theme';
import { drawMermaid, drawnMermaid, type MermaidImage } from './mermaidImage';

type Drawing = { kind: 'drawing' } | { kind: 'drawn'; image: MermaidImage } | { kind: 'failed'; message: string };

/**
 * A ```mermaid fence, drawn as an image once the fence is complete (until then, and
 * beside the image, its source). The image is in the page's light or dark colours, and
 * drawn again when they change. Source that mermaid cannot read shows mermaid's message
 * (where and what it expected) above the source.
 */
export function MermaidDiagram({ code, isIncomplete }: CustomRendererProps) {
  const dark = useDarkTheme();
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

/** Whether the app shows its dark colours now (`theme.ts`: the user's choice, else the system's). */
function useDarkTheme(): boolean {
  return useSyncExternalStore(onThemeChange, () => resolvedTheme() === 'dark', () => false);
}
