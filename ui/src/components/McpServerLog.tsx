import { useEffect, useState } from 'react';
import { toApiFailure, type ApiFailure } from '../backend/backend';
import type { IdRequest, McpLogLevel, McpLogLevelRequest, McpServer, McpServerLog as Log } from '../protocol.gen';
import { useBackend } from './BackendContext';
import { ErrorNotice } from './ErrorNotice';

/** Read again this often while the log is open. */
const POLL_MS = 2000;
/** Lines shown: the newest, of the 200 the app keeps. */
const TAIL = 50;

const LEVELS: McpLogLevel[] = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];

/**
 * What a server sent through MCP logging: folded away, read (and kept reading) only while
 * open, with the level it is asked to log at.
 */
export function McpServerLog({ server }: { server: McpServer }) {
  const [open, setOpen] = useState(false);
  return (
    <details className="mcp-log" data-testid="mcp-log" onToggle={(event) => setOpen(event.currentTarget.open)}>
      <summary className="small">Server log</summary>
      {open && <LogTail server={server} />}
    </details>
  );
}

function LogTail({ server }: { server: McpServer }) {
  const backend = useBackend();
  const [log, setLog] = useState<Log>();
  const [error, setError] = useState<ApiFailure>();
  const [saving, setSaving] = useState(false);

  useEffect(() => {
    let current = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const poll = () => {
      backend
        .call('mcp_server_log', { id: server.id } satisfies IdRequest)
        .then((read) => {
          if (current) setLog(read);
        })
        .catch((failure: unknown) => {
          if (current) setError(toApiFailure(failure, `Could not read the log of ${server.name}`));
        })
        .finally(() => {
          if (current) timer = setTimeout(poll, POLL_MS);
        });
    };
    poll();
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [backend, server.id, server.name]);

  const setLevel = async (level: McpLogLevel) => {
    setSaving(true);
    setError(undefined);
    try {
      setLog(await backend.call('mcp_server_log_level', { id: server.id, level } satisfies McpLogLevelRequest));
    } catch (failure) {
      setError(toApiFailure(failure, `Could not set the log level of ${server.name}`));
    } finally {
      setSaving(false);
    }
  };

  if (!log) return error ? <ErrorNotice error={error} /> : <p className="muted small">Loading the log…</p>;
  const shown = log.entries.slice(-TAIL);
  return (
    <div className="mcp-log-body">
      {error && <ErrorNotice error={error} onDismiss={() => setError(undefined)} />}
      <label className="small">
        Level{' '}
        <select
          data-testid="mcp-log-level"
          value={log.level ?? ''}
          disabled={!log.supported || saving}
          title={log.supported ? 'Messages less severe than this are not sent' : 'Only a connected server that offers logging has a level'}
          onChange={(event) => void setLevel(event.target.value as McpLogLevel)}
        >
          {!log.level && <option value="">the server&apos;s default</option>}
          {LEVELS.map((level) => (
            <option key={level} value={level}>
              {level}
            </option>
          ))}
        </select>
      </label>
      {!log.supported && <span className="muted small"> (this server does not offer logging, or is not connected)</span>}
      {shown.length === 0 ? (
        <p className="muted small">Nothing logged since Colloquy started.</p>
      ) : (
        <ol className="mcp-log-entries small" aria-label={`Log of ${server.name}`}>
          {log.entries.length > shown.length && (
            <li className="muted">{log.entries.length - shown.length} earlier messages not shown</li>
          )}
          {shown.map((entry, index) => (
            <li key={`${entry.at}-${index}`} data-testid="mcp-log-entry" data-level={entry.level}>
              <time dateTime={entry.at}>{new Date(entry.at).toLocaleTimeString()}</time>{' '}
              <span className={`badge mcp-log-level ${entry.level}`}>{entry.level}</span>{' '}
              {entry.logger && <span className="muted">[{entry.logger}] </span>}
              <span className="mcp-log-text">{entry.text}</span>
            </li>
          ))}
        </ol>
      )}
    </div>
  );
}
