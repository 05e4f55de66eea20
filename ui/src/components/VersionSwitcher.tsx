import { useState } from 'react';

interface VersionSwitcherProps {
  /** Every version, oldest first. */
  versions: readonly string[];
  /** The version shown. */
  current: string;
  /** Shows another version; resolves once the conversation shows it (or it failed). */
  onSelect: (messageId: string) => Promise<void>;
}

/**
 * `‹ 2/3 ›` beside a message with several versions (a user message's edits, a reply's
 * regenerations). Switching never stops a version that is being written.
 */
export function VersionSwitcher({ versions, current, onSelect }: VersionSwitcherProps) {
  const [busy, setBusy] = useState(false);
  const index = Math.max(0, versions.indexOf(current));
  const go = (to: number) => {
    const messageId = versions[to];
    if (messageId === undefined) return;
    setBusy(true);
    void onSelect(messageId).finally(() => setBusy(false));
  };
  return (
    <div className="version-switcher" role="group" aria-label="Versions" data-testid="version-switcher">
      <button
        type="button"
        className="icon-button"
        data-testid="version-previous"
        aria-label="Previous version"
        title="Previous version"
        disabled={busy || index === 0}
        onClick={() => go(index - 1)}
      >
        ‹
      </button>
      <span className="version-label small" data-testid="version-label">
        {index + 1}/{versions.length}
      </span>
      <button
        type="button"
        className="icon-button"
        data-testid="version-next"
        aria-label="Next version"
        title="Next version"
        disabled={busy || index === versions.length - 1}
        onClick={() => go(index + 1)}
      >
        ›
      </button>
    </div>
  );
}
