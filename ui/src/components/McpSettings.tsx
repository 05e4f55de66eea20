import { useEffect, useRef, useState } from 'react';
import { toApiFailure, type ApiFailure } from '../backend/backend';
import type { IdRequest, McpServer, McpServerInput, UpdateMcpServer } from '../protocol.gen';
import { readyWithProblems, stateLabel, toolCountText, transportInputFromServer, transportSummary } from '../settings/mcpForm';
import { useBackend } from './BackendContext';
import { ErrorNotice } from './ErrorNotice';
import { McpServerForm } from './McpServerForm';
import { McpServerLog } from './McpServerLog';

/** Status changes are not pushed: the list is read again this often while it is shown. */
const POLL_MS = 1500;
/** More tool names than this are folded away. */
const MANY_TOOLS = 24;

type Editing = { kind: 'none' } | { kind: 'add' } | { kind: 'edit'; id: string };

/**
 * MCP servers: each with its live status (connecting, ready with its tools, or what went
 * wrong), added, edited, switched on and off, refreshed and deleted here.
 */
export function McpSettings() {
  const backend = useBackend();
  const [servers, setServers] = useState<McpServer[]>();
  const [loadError, setLoadError] = useState<ApiFailure>();
  const [error, setError] = useState<ApiFailure>();
  const [editing, setEditing] = useState<Editing>({ kind: 'none' });
  const [confirmDelete, setConfirmDelete] = useState<string>();
  const [busy, setBusy] = useState<string>();
  // Bumped by every change made here: a list read before it is stale and is not shown.
  const version = useRef(0);

  useEffect(() => {
    let current = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const poll = () => {
      const asked = version.current;
      backend
        .call('mcp_servers_list')
        .then((list) => {
          if (!current || version.current !== asked) return;
          setServers(list);
          setLoadError(undefined);
        })
        .catch((failure: unknown) => {
          if (current) setLoadError(toApiFailure(failure, 'Could not list the MCP servers'));
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
  }, [backend]);

  const show = (server: McpServer) => {
    version.current += 1;
    setServers((list) => {
      const rest = list ?? [];
      return rest.some((candidate) => candidate.id === server.id)
        ? rest.map((candidate) => (candidate.id === server.id ? server : candidate))
        : [...rest, server];
    });
  };

  const act = async (id: string, what: string, action: () => Promise<void>) => {
    setBusy(id);
    setError(undefined);
    try {
      await action();
    } catch (failure) {
      setError(toApiFailure(failure, what));
    } finally {
      setBusy(undefined);
    }
  };

  const setEnabled = (server: McpServer, enabled: boolean) =>
    void act(server.id, `Could not switch ${server.name} ${enabled ? 'on' : 'off'}`, async () => {
      const input: McpServerInput = {
        name: server.name,
        transport: transportInputFromServer(server.transport),
        enabled,
        trustReadOnly: server.trustReadOnly,
        samplingAllowed: server.samplingAllowed,
        timeoutSecs: server.timeoutSecs,
      };
      show(await backend.call('mcp_server_update', { id: server.id, server: input } satisfies UpdateMcpServer));
    });

  const refresh = (server: McpServer) =>
    void act(server.id, `Could not refresh ${server.name}`, async () => {
      // It lists the tools again in the background; the polls show how that goes.
      await backend.call('mcp_server_refresh', { id: server.id } satisfies IdRequest);
    });

  const remove = (server: McpServer) =>
    void act(server.id, `Could not delete ${server.name}`, async () => {
      await backend.call('mcp_server_delete', { id: server.id } satisfies IdRequest);
      version.current += 1;
      setServers((list) => (list ?? []).filter((candidate) => candidate.id !== server.id));
      setConfirmDelete(undefined);
    });

  const saved = (server: McpServer) => {
    show(server);
    setEditing({ kind: 'none' });
  };

  return (
    <>
      <h3>MCP servers</h3>
      <p className="muted small">
        MCP servers give models more tools: a program started on this computer, or a server at a URL. Each server&apos;s
        tools are named <code>&lt;server&gt;__&lt;tool&gt;</code> after the name it had when it was added; they ask you
        before they run unless you let read-only ones through, and each can be switched off on its own in Tools.
      </p>
      {error && <ErrorNotice error={error} onDismiss={() => setError(undefined)} />}
      {loadError && !servers && <ErrorNotice error={loadError} />}
      {!servers && !loadError && <p className="muted">Loading MCP servers…</p>}
      {servers?.length === 0 && <p className="muted">No MCP servers yet.</p>}
      <ul className="settings-list">
        {servers?.map((server) =>
          editing.kind === 'edit' && editing.id === server.id ? (
            <li key={server.id} className="settings-item editing">
              <McpServerForm server={server} onSaved={saved} onCancel={() => setEditing({ kind: 'none' })} />
            </li>
          ) : (
            <McpServerItem
              key={server.id}
              server={server}
              busy={busy === server.id}
              confirmingDelete={confirmDelete === server.id}
              onEnabled={(enabled) => setEnabled(server, enabled)}
              onRefresh={() => refresh(server)}
              onEdit={() => setEditing({ kind: 'edit', id: server.id })}
              onDelete={() => setConfirmDelete(server.id)}
              onDeleteConfirmed={() => remove(server)}
              onDeleteCancelled={() => setConfirmDelete(undefined)}
            />
          ),
        )}
      </ul>
      {editing.kind === 'add' ? (
        <div className="card">
          <h3>Add an MCP server</h3>
          <McpServerForm onSaved={saved} onCancel={() => setEditing({ kind: 'none' })} />
        </div>
      ) : (
        <button type="button" className="button primary" data-testid="mcp-add" onClick={() => setEditing({ kind: 'add' })}>
          Add MCP server
        </button>
      )}
      <McpRoots />
    </>
  );
}

/**
 * The folders every server is offered as its roots (MCP `roots/list`): the workspace
 * folders of all topics and assistants. Servers that honour roots (the filesystem server
 * does) keep to them instead of their own start-up folders.
 */
function McpRoots() {
  const backend = useBackend();
  const [roots, setRoots] = useState<string[]>();
  const [error, setError] = useState<ApiFailure>();

  useEffect(() => {
    let current = true;
    backend
      .call('mcp_roots_list')
      .then((list) => {
        if (current) setRoots(list);
      })
      .catch((failure: unknown) => {
        if (current) setError(toApiFailure(failure, 'Could not read the folders offered to MCP servers'));
      });
    return () => {
      current = false;
    };
  }, [backend]);

  return (
    <section className="mcp-roots" data-testid="mcp-roots">
      <h4>Folders offered as roots</h4>
      <p className="muted small">
        Servers are told which folders they may work in: the workspace folders of your topics and assistants (set in a
        topic&apos;s or an assistant&apos;s settings). Servers are told again when these change.
      </p>
      {error && <ErrorNotice error={error} />}
      {roots?.length === 0 && <p className="muted small">None: no topic or assistant has a workspace folder.</p>}
      {roots && roots.length > 0 && (
        <ul className="mcp-roots-list">
          {roots.map((root) => (
            <li key={root} data-testid="mcp-root">
              <code>{root}</code>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

interface McpServerItemProps {
  server: McpServer;
  busy: boolean;
  confirmingDelete: boolean;
  onEnabled: (enabled: boolean) => void;
  onRefresh: () => void;
  onEdit: () => void;
  onDelete: () => void;
  onDeleteConfirmed: () => void;
  onDeleteCancelled: () => void;
}

/** One server: name, state, how it runs, its tools, and what went wrong. */
function McpServerItem(props: McpServerItemProps) {
  const { server, busy, confirmingDelete } = props;
  const { status } = server;
  return (
    <li
      className="settings-item mcp-server"
      data-testid="mcp-server"
      data-server-id={server.id}
      data-name={server.name}
      data-state={status.state}
    >
      <div className="settings-item-main mcp-server-main">
        <div className="settings-item-title">
          <span>{server.name}</span>
          <span
            className={`badge mcp-state ${readyWithProblems(status) ? 'warn' : status.state}`}
            data-testid="mcp-state"
            data-state={status.state}
            data-problems={readyWithProblems(status) ? 'true' : undefined}
          >
            {stateLabel(status)}
          </span>
          <span className="muted small" data-testid="mcp-tool-count">
            {toolCountText(server)}
          </span>
          {server.trustReadOnly && <span className="badge">read-only tools run without asking</span>}
          {server.samplingAllowed && (
            <span className="badge" data-testid="mcp-sampling-badge">
              uses the model without asking
            </span>
          )}
        </div>
        <p className="small muted mcp-transport" title={transportSummary(server.transport)}>
          <code>{transportSummary(server.transport)}</code> · timeout {server.timeoutSecs} s
        </p>
        {status.message && (
          <p
            className={`small ${status.state === 'error' ? 'field-error' : status.state === 'ready' ? 'mcp-warning' : 'muted'}`}
            data-testid="mcp-error-message"
            role={status.state === 'error' ? 'alert' : status.state === 'ready' ? 'status' : undefined}
          >
            {status.message}
          </p>
        )}
        {status.stderrTail && (
          <details className="mcp-stderr" data-testid="mcp-stderr">
            <summary className="small">What the server wrote to its error output</summary>
            <pre>{status.stderrTail}</pre>
          </details>
        )}
        {status.instructions && (
          <details className="mcp-stderr" data-testid="mcp-instructions">
            <summary className="small">Its instructions for models (the first 4 KiB join the system prompt while its tools are offered)</summary>
            <pre>{status.instructions}</pre>
          </details>
        )}
        {server.enabled && <McpServerLog server={server} />}
        {status.problems.length > 0 && (
          <div className="mcp-problems" data-testid="mcp-problems">
            <span className="small">Not offered (the rest of its tools work):</span>
            <ul className="small">
              {status.problems.map((problem, index) => (
                <li key={index}>{problem}</li>
              ))}
            </ul>
          </div>
        )}
        {server.tools.length > 0 && server.tools.length <= MANY_TOOLS && <ToolNames server={server} />}
        {server.tools.length > MANY_TOOLS && (
          <details>
            <summary className="small">Show the names of its {server.tools.length} tools</summary>
            <ToolNames server={server} />
          </details>
        )}
      </div>
      <div className="mcp-server-side">
        <label className="switch">
          <input
            type="checkbox"
            data-testid="mcp-enabled-switch"
            checked={server.enabled}
            disabled={busy}
            onChange={(event) => props.onEnabled(event.target.checked)}
          />
          <span>{server.enabled ? 'On' : 'Off'}</span>
        </label>
        {confirmingDelete ? (
          <div className="provider-actions">
            <span className="small">Delete {server.name}? Its tools go away.</span>
            <button type="button" className="button danger small" data-testid="mcp-delete-confirm" disabled={busy} onClick={props.onDeleteConfirmed}>
              Delete
            </button>
            <button type="button" className="button ghost small" onClick={props.onDeleteCancelled}>
              Cancel
            </button>
          </div>
        ) : (
          <div className="provider-actions">
            <button
              type="button"
              className="button small"
              data-testid="mcp-refresh"
              disabled={busy || !server.enabled}
              title={server.enabled ? 'Reconnect and list its tools again' : 'Switch it on to list its tools'}
              onClick={props.onRefresh}
            >
              {busy ? 'Working…' : 'Refresh'}
            </button>
            <button type="button" className="button small" data-testid="mcp-edit" onClick={props.onEdit}>
              Edit
            </button>
            <button type="button" className="button ghost small" data-testid="mcp-delete" onClick={props.onDelete}>
              Delete
            </button>
          </div>
        )}
      </div>
    </li>
  );
}

/** The names a server's tools have in Colloquy (`<server>__<tool>`), as models and rules see them. */
function ToolNames({ server }: { server: McpServer }) {
  return (
    <ul className="mcp-tools" aria-label={`Tools of ${server.name}`}>
      {server.tools.map((tool) => (
        <li key={tool} data-testid="mcp-tool" data-tool={tool}>
          <code>{tool}</code>
        </li>
      ))}
    </ul>
  );
}
