import { useState } from 'react';
import { deliverFile } from '../archive/deliver';
import { toApiFailure, type ApiFailure } from '../backend/backend';
import type { ExportFormat } from '../protocol.gen';
import { useBackend } from './BackendContext';
import { usePopover } from './usePopover';

const FORMATS: readonly { format: ExportFormat; label: string; help: string }[] = [
  { format: 'markdown', label: 'Markdown', help: 'Readable text, as shown' },
  { format: 'html', label: 'Web page', help: 'One self-contained HTML file' },
  { format: 'json', label: 'JSON', help: 'Every version and branch; Colloquy can import it' },
];

/** The topic menu's "Export": Markdown, a web page or JSON, downloaded (or saved to Downloads on the desktop). */
export function TopicExportMenu({ topicId, title }: { topicId: string; title: string }) {
  const backend = useBackend();
  const { open, setOpen, ref, panelRef } = usePopover<HTMLSpanElement>({ align: 'end' });
  const [busy, setBusy] = useState<ExportFormat>();
  const [done, setDone] = useState<string>();
  const [error, setError] = useState<ApiFailure>();

  const run = async (format: ExportFormat) => {
    setBusy(format);
    setDone(undefined);
    setError(undefined);
    try {
      const file = await backend.call('topic_export', { topicId, format });
      setDone(await deliverFile(backend, file));
    } catch (failure) {
      setError(toApiFailure(failure, 'Could not export the topic'));
    } finally {
      setBusy(undefined);
    }
  };

  return (
    <span className="topic-export" ref={ref}>
      <button
        type="button"
        className="icon-button"
        aria-label={`Export “${title || 'Untitled'}”`}
        title="Export"
        aria-haspopup="menu"
        aria-expanded={open}
        data-testid="topic-export"
        onClick={() => {
          setOpen(!open);
          setDone(undefined);
          setError(undefined);
        }}
      >
        ⇩
      </button>
      {open && (
        <div className="popover-menu topic-export-menu" role="menu" aria-label="Export as" ref={panelRef}>
          {FORMATS.map(({ format, label, help }) => (
            <button
              key={format}
              type="button"
              role="menuitem"
              data-testid="topic-export-format"
              data-format={format}
              disabled={busy !== undefined}
              onClick={() => void run(format)}
              title={help}
            >
              <span>{label}</span>
              <span className="muted small">{busy === format ? 'Exporting…' : help}</span>
            </button>
          ))}
          {done && (
            <p className="small topic-export-done" role="status" data-testid="topic-export-done">
              {done}
            </p>
          )}
          {error && (
            <p className="field-error" role="alert">
              {error.message}
            </p>
          )}
        </div>
      )}
    </span>
  );
}
