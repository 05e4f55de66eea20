import { useState, type FormEvent } from 'react';
import { toApiFailure } from '../backend/backend';
import type { McpServer, UpdateMcpServer } from '../protocol.gen';
import { fieldErrorsFrom, NO_ERRORS, type FieldErrors } from '../settings/fieldErrors';
import { draftFromServer, MAX_TIMEOUT_SECS, mcpFields, mcpInputFromDraft, toolPrefix, type McpDraft } from '../settings/mcpForm';
import { useBackend } from './BackendContext';
import { FolderField } from './FolderField';
import { KeyValueRows } from './KeyValueRows';
import { useSecretStore } from './useSecretStore';

interface McpServerFormProps {
  server?: McpServer;
  onSaved: (server: McpServer) => void;
  onCancel: () => void;
}

/**
 * An MCP server: its name, how it is reached (a program started here over stdio, or an
 * HTTP URL), whether it is on, whether its read-only tools run without asking, and how
 * long one call may take. Errors show under the field they are about.
 */
export function McpServerForm({ server, onSaved, onCancel }: McpServerFormProps) {
  const backend = useBackend();
  const secretStore = useSecretStore();
  const secretsHelp = secretStore ? `Values are stored in ${secretStore} and never shown again.` : 'Values are never shown again.';
  const [draft, setDraft] = useState<McpDraft>(() => draftFromServer(server));
  const [errors, setErrors] = useState<FieldErrors>(NO_ERRORS);
  const [saving, setSaving] = useState(false);
  const change = (patch: Partial<McpDraft>) => setDraft({ ...draft, ...patch });

  const save = async (event: FormEvent) => {
    event.preventDefault();
    const checked = mcpInputFromDraft(draft);
    if ('errors' in checked) {
      setErrors(checked.errors);
      return;
    }
    setErrors(NO_ERRORS);
    setSaving(true);
    try {
      const saved = server
        ? await backend.call('mcp_server_update', { id: server.id, server: checked.input } satisfies UpdateMcpServer)
        : await backend.call('mcp_server_create', checked.input);
      onSaved(saved);
    } catch (failure) {
      setErrors(fieldErrorsFrom(toApiFailure(failure, 'Could not save the MCP server'), mcpFields(draft.kind)));
      setSaving(false);
    }
  };

  const errorAt = (field: string) =>
    errors[field] ? (
      <div className="field-error" data-testid="form-error" data-field={field} role="alert">
        {errors[field]}
      </div>
    ) : null;

  return (
    <form className="assistant-form mcp-form" data-testid="mcp-form" onSubmit={save} noValidate>
      {errors[''] && (
        <div className="form-error" data-testid="form-error" role="alert">
          {errors['']}
        </div>
      )}
      <div className="field-grid">
        <label className="field">
          <span className="field-label">Name</span>
          <input
            data-testid="mcp-name"
            value={draft.name}
            onChange={(event) => change({ name: event.target.value })}
            placeholder="e.g. files"
            spellCheck={false}
            autoComplete="off"
          />
          <span className="field-help" data-testid="mcp-namespace">
            {server ? (
              <>
                Its tools are called <code>{server.namespace}__&lt;tool&gt;</code>, whatever its name (their switches and
                approval rules stay with them).
              </>
            ) : (
              <>
                Its tools will be called <code>{toolPrefix(draft.name)}__&lt;tool&gt;</code> (with <code>_2</code> if another
                server has that prefix), and keep that when it is renamed.
              </>
            )}
          </span>
          {errorAt('name')}
        </label>
        <label className="field">
          <span className="field-label">Connection</span>
          <select data-testid="mcp-transport" value={draft.kind} onChange={(event) => change({ kind: event.target.value === 'http' ? 'http' : 'stdio' })}>
            <option value="stdio">A program on this computer (stdio)</option>
            <option value="http">A server at a URL (HTTP)</option>
          </select>
        </label>
      </div>
      {draft.kind === 'stdio' ? (
        <>
          <label className="field">
            <span className="field-label">Command</span>
            <input
              data-testid="mcp-command"
              value={draft.command}
              onChange={(event) => change({ command: event.target.value })}
              placeholder="e.g. npx, uvx, or /full/path/to/server"
              spellCheck={false}
              autoComplete="off"
            />
            {errorAt('transport.command')}
          </label>
          <label className="field">
            <span className="field-label">Arguments</span>
            <textarea
              data-testid="mcp-args"
              value={draft.args}
              rows={3}
              onChange={(event) => change({ args: event.target.value })}
              placeholder={'One per line, e.g.\n-y\n@modelcontextprotocol/server-filesystem\n/home/you/notes'}
              spellCheck={false}
            />
            <span className="field-help">One argument per line, passed as they are (no shell quoting needed).</span>
            {errorAt('transport.args')}
          </label>
          <fieldset className="field">
            <legend className="field-label">Environment variables</legend>
            <KeyValueRows
              rows={draft.env}
              onChange={(env) => change({ env })}
              testId="mcp-env"
              keyLabel="Variable"
              keyPlaceholder="NAME"
              valuePlaceholder="value"
              addLabel="+ Add variable"
            />
            <span className="field-help">Set for the server on top of Colloquy&apos;s own. {secretsHelp}</span>
            {errorAt('transport.env')}
          </fieldset>
          <div className="field">
            <span className="field-label">Working folder</span>
            <FolderField
              value={draft.cwd}
              testId="mcp-cwd"
              dialogTitle="Choose the folder the MCP server runs in"
              error={errors['transport.cwd']}
              onChoose={(path) => change({ cwd: path })}
              onClear={() => change({ cwd: '' })}
            />
            <span className="field-help">Optional: where the program starts.</span>
          </div>
        </>
      ) : (
        <>
          <label className="field">
            <span className="field-label">URL</span>
            <input
              data-testid="mcp-url"
              value={draft.url}
              onChange={(event) => change({ url: event.target.value })}
              placeholder="https://example.com/mcp"
              spellCheck={false}
              autoComplete="off"
            />
            {errorAt('transport.url')}
          </label>
          <fieldset className="field">
            <legend className="field-label">Headers</legend>
            <KeyValueRows
              rows={draft.headers}
              onChange={(headers) => change({ headers })}
              testId="mcp-header"
              keyLabel="Header"
              keyPlaceholder="Authorization"
              valuePlaceholder="Bearer …"
              addLabel="+ Add header"
            />
            <span className="field-help">Sent with every request. {secretsHelp}</span>
            {errorAt('transport.headers')}
          </fieldset>
        </>
      )}
      <label className="check">
        <input type="checkbox" data-testid="mcp-enabled" checked={draft.enabled} onChange={(event) => change({ enabled: event.target.checked })} />
        <span>On — connect and offer its tools to models</span>
      </label>
      <label className="check">
        <input
          type="checkbox"
          data-testid="mcp-trust-read-only"
          checked={draft.trustReadOnly}
          onChange={(event) => change({ trustReadOnly: event.target.checked })}
        />
        <span>Let read-only tools run without asking</span>
      </label>
      <span className="field-help">
        Only tools the server itself marks read-only; every other tool asks you first unless an approval rule says otherwise.
      </span>
      <label className="check">
        <input
          type="checkbox"
          data-testid="mcp-sampling-allowed"
          checked={draft.samplingAllowed}
          onChange={(event) => change({ samplingAllowed: event.target.checked })}
        />
        <span>Let it ask the reply’s model without asking me (sampling)</span>
      </label>
      <span className="field-help">Off: each time the server wants the model to write something, the reply shows what it sends and asks you first.</span>
      <label className="field">
        <span className="field-label">Timeout (seconds)</span>
        <input
          data-testid="mcp-timeout"
          type="number"
          min={1}
          max={MAX_TIMEOUT_SECS}
          value={draft.timeoutSecs}
          onChange={(event) => change({ timeoutSecs: event.target.value })}
        />
        <span className="field-help">How long one tool call may take (1–{MAX_TIMEOUT_SECS}).</span>
        {errorAt('timeoutSecs')}
      </label>
      <div className="form-actions">
        <button type="button" className="button ghost" onClick={onCancel}>
          Cancel
        </button>
        <button type="submit" className="button primary" data-testid="mcp-save" disabled={saving}>
          {saving ? 'Saving…' : server ? 'Save server' : 'Add server'}
        </button>
      </div>
    </form>
  );
}
