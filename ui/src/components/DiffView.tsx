import { useMemo } from 'react';
import { diffStats, parseUnifiedDiff } from '../chat/diff';

/** A unified diff with added lines green and removed ones red (what a file edit would change). */
export function DiffView({ diff }: { diff: string }) {
  const lines = useMemo(() => parseUnifiedDiff(diff), [diff]);
  const stats = diffStats(lines);
  return (
    <figure className="diff" data-testid="approval-diff">
      <figcaption className="diff-stats small">
        <span className="diff-added">+{stats.added}</span> <span className="diff-removed">−{stats.removed}</span>
      </figcaption>
      <pre className="diff-body">
        {lines.map((line, index) => (
          <div key={index} className={`diff-line ${line.kind}`} data-kind={line.kind}>
            <span className="diff-marker" aria-hidden="true">
              {line.kind === 'add' ? '+' : line.kind === 'remove' ? '−' : ' '}
            </span>
            <span className="diff-text">{line.text === '' ? '\u00a0' : line.text}</span>
          </div>
        ))}
      </pre>
    </figure>
  );
}
