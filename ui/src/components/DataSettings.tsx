import { useEffect, useRef, useState, type ChangeEvent } from 'react';
import { importBatches } from '../archive/batches';
import { deliverFile } from '../archive/deliver';
import { exportEverything } from '../archive/exportAll';
import { toApiFailure, type ApiFailure } from '../backend/backend';
import type { BackupInfo, ExportFormat, ImportReport, ImportSkip, ImportedTopic } from '../protocol.gen';
import { useBackend } from './BackendContext';
import { ErrorNotice } from './ErrorNotice';

/**
 * Settings → Import & export: every topic into one file, conversations from a file, and
 * backups of the database. Imported topics reach the topic list as any new topic does
 * (the status feed tells every window that the list changed).
 */
export function DataSettings() {
  return (
    <div className="data-settings" data-testid="data-settings">
      <h3>Import &amp; export</h3>
      <ExportEverything />
      <ImportConversations />
      <Backups />
    </div>
  );
}

interface Progress {
  done: number;
  total: number;
}

function ProgressBar({ progress, label, testId }: { progress: Progress; label: string; testId: string }) {
  return (
    <div role="status" data-testid={testId}>
      <progress value={progress.done} max={Math.max(progress.total, 1)} aria-label={label} />
      <span className="muted small">
        {label}: {progress.done} of {progress.total}
      </span>
    </div>
  );
}

function ExportEverything() {
  const backend = useBackend();
  const [format, setFormat] = useState<ExportFormat>('json');
  const [progress, setProgress] = useState<Progress>();
  const [done, setDone] = useState<string>();
  const [error, setError] = useState<ApiFailure>();
  const abort = useRef<AbortController>(undefined);
  useEffect(() => () => abort.current?.abort(), []);

  const run = async () => {
    abort.current = new AbortController();
    setDone(undefined);
    setError(undefined);
    setProgress({ done: 0, total: 0 });
    try {
      const file = await exportEverything(backend, format, (n, total) => setProgress({ done: n, total }), abort.current.signal);
      setDone(await deliverFile(backend, file));
    } catch (failure) {
      if (!(failure instanceof DOMException && failure.name === 'AbortError')) setError(toApiFailure(failure, 'Could not export'));
    } finally {
      setProgress(undefined);
    }
  };

  return (
    <section>
      <h4>Export everything</h4>
      <p className="field-help">
        Every topic in one file. JSON keeps every version and branch and can be imported again; Markdown and the web page hold
        the conversations as shown.
      </p>
      <div className="field-row">
        <select value={format} onChange={(e) => setFormat(e.target.value as ExportFormat)} data-testid="export-all-format" aria-label="Format">
          <option value="json">JSON (Colloquy, lossless)</option>
          <option value="markdown">Markdown</option>
          <option value="html">Web page (HTML)</option>
        </select>
        {progress ? (
          <button type="button" className="button" onClick={() => abort.current?.abort()}>
            Cancel
          </button>
        ) : (
          <button type="button" className="button primary" data-testid="export-all" onClick={() => void run()}>
            Export everything
          </button>
        )}
      </div>
      {progress && <ProgressBar progress={progress} label="Topics exported" testId="export-progress" />}
      {done && (
        <p className="small" role="status" data-testid="export-all-done">
          {done}
        </p>
      )}
      {error && <ErrorNotice error={error} onDismiss={() => setError(undefined)} />}
    </section>
  );
}

function ImportConversations() {
  const backend = useBackend();
  const [progress, setProgress] = useState<Progress>();
  const [report, setReport] = useState<{ imported: ImportedTopic[]; skipped: ImportSkip[]; source: ImportReport['source'] }>();
  const [error, setError] = useState<ApiFailure>();
  const input = useRef<HTMLInputElement>(null);

  const pick = async (event: ChangeEvent<HTMLInputElement>) => {
    const file = event.target.files?.[0];
    event.target.value = '';
    if (!file) return;
    setReport(undefined);
    setError(undefined);
    const imported: ImportedTopic[] = [];
    const skipped: ImportSkip[] = [];
    let source: ImportReport['source'] | undefined;
    try {
      const { batches, total } = importBatches(await file.text());
      setProgress({ done: 0, total });
      let done = 0;
      for (const batch of batches) {
        const answer = await backend.call('topics_import', { content: batch.content });
        source = answer.source;
        imported.push(...answer.imported);
        skipped.push(...answer.skipped);
        done += batch.count;
        setProgress({ done, total });
      }
    } catch (failure) {
      setError(toApiFailure(failure, `Could not import ${file.name}`));
    } finally {
      setProgress(undefined);
      if (source) setReport({ imported, skipped, source });
    }
  };

  return (
    <section>
      <h4>Import conversations</h4>
      <p className="field-help">
        A Colloquy JSON export, or <code>conversations.json</code> from a ChatGPT or Claude.ai data export. Each conversation
        becomes a new topic; nothing you have is changed.
      </p>
      <input ref={input} type="file" accept=".json,application/json" hidden onChange={(e) => void pick(e)} data-testid="import-file" />
      <button type="button" className="button" disabled={progress !== undefined} onClick={() => input.current?.click()}>
        Choose a file…
      </button>
      {progress && <ProgressBar progress={progress} label="Conversations imported" testId="import-progress" />}
      {error && <ErrorNotice error={error} hint="Nothing from this part of the file was imported." onDismiss={() => setError(undefined)} />}
      {report && <ImportSummary report={report} />}
    </section>
  );
}

const SOURCE_NAMES: Record<ImportReport['source'], string> = { colloquy: 'Colloquy', chatgpt: 'ChatGPT', claude: 'Claude.ai' };

function ImportSummary({ report }: { report: { imported: ImportedTopic[]; skipped: ImportSkip[]; source: ImportReport['source'] } }) {
  return (
    <div className="import-report" role="status" data-testid="import-report">
      <p>
        Imported {report.imported.length} {report.imported.length === 1 ? 'conversation' : 'conversations'} from{' '}
        {SOURCE_NAMES[report.source]}.
        {report.skipped.length > 0 && ` ${report.skipped.length} ${report.skipped.length === 1 ? 'item was' : 'items were'} left out:`}
      </p>
      {report.skipped.length > 0 && (
        <ul className="small" data-testid="import-skipped">
          {report.skipped.slice(0, 200).map((skip, index) => (
            <li key={index}>
              <strong>{skip.conversation}</strong>
              {skip.message ? ` (message ${skip.message})` : ''}
              {skip.setting ? ` (its ${skip.setting === 'params' ? 'model settings' : 'system prompt'}; the conversation was imported)` : ''}: {skip.reason}
            </li>
          ))}
          {report.skipped.length > 200 && <li>… and {report.skipped.length - 200} more.</li>}
        </ul>
      )}
    </div>
  );
}

function Backups() {
  const backend = useBackend();
  const [backups, setBackups] = useState<BackupInfo[]>();
  const [busy, setBusy] = useState(false);
  const [confirm, setConfirm] = useState<string>();
  const [message, setMessage] = useState<string>();
  const [error, setError] = useState<ApiFailure>();

  const [listed, setListed] = useState(0);
  const load = () => setListed((n) => n + 1);
  useEffect(() => {
    let current = true;
    backend
      .call('backups_list')
      .then((list) => {
        if (current) setBackups(list);
      })
      .catch((failure: unknown) => {
        if (current) setError(toApiFailure(failure, 'Could not list the backups'));
      });
    return () => {
      current = false;
    };
  }, [backend, listed]);

  const create = async () => {
    setBusy(true);
    setMessage(undefined);
    setError(undefined);
    try {
      const backup = await backend.call('backup_create');
      setMessage(`Backed up to ${backup.path}. API keys are not in backups: after a restore, enter them again.`);
      load();
    } catch (failure) {
      setError(toApiFailure(failure, 'Could not back up'));
    } finally {
      setBusy(false);
    }
  };

  const restore = async (fileName: string) => {
    setBusy(true);
    setConfirm(undefined);
    setMessage(undefined);
    setError(undefined);
    try {
      const plan = await backend.call('backup_restore', { fileName });
      setMessage(plan.message);
    } catch (failure) {
      setError(toApiFailure(failure, 'Could not restore'));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section>
      <h4>Backups</h4>
      <p className="field-help">
        A copy of every conversation, setting, provider and rule, made while Colloquy runs. API keys and MCP secrets are not in
        it: after restoring, enter them again.
      </p>
      <button type="button" className="button" disabled={busy} onClick={() => void create()} data-testid="backup-create">
        {busy ? 'Working…' : 'Back up now'}
      </button>
      {message && (
        <p className="small" role="status" data-testid="backup-message">
          {message}
        </p>
      )}
      {error && <ErrorNotice error={error} onDismiss={() => setError(undefined)} />}
      {backups && backups.length > 0 && (
        <ul className="backup-list small">
          {backups.map((backup) => {
            const name = backup.path.split(/[\\/]/).pop() ?? backup.path;
            return (
              <li key={backup.path}>
                {name} · {new Date(backup.createdAt).toLocaleString()} · {(backup.bytes / 1024 / 1024).toFixed(1)} MB{' '}
                {confirm === name ? (
                  <>
                    <span>Replace your current conversations with this backup at the next start? The current ones are kept aside.</span>{' '}
                    <button type="button" className="button danger small" onClick={() => void restore(name)}>
                      Restore at next start
                    </button>{' '}
                    <button type="button" className="button ghost small" onClick={() => setConfirm(undefined)}>
                      Cancel
                    </button>
                  </>
                ) : (
                  <button type="button" className="button ghost small" disabled={busy} onClick={() => setConfirm(name)}>
                    Restore…
                  </button>
                )}
              </li>
            );
          })}
        </ul>
      )}
    </section>
  );
}
