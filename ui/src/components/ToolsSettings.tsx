import { useEffect, useState } from 'react';
import { toApiFailure, type ApiFailure } from '../backend/backend';
import type { ToolEnableRequest, ToolInfo } from '../protocol.gen';
import { useBackend } from './BackendContext';
import { ErrorNotice } from './ErrorNotice';

/** Tools grouped by where they come from: built in, or each MCP server. */
export function groupTools(tools: readonly ToolInfo[]): { source: string; tools: ToolInfo[] }[] {
  const groups = new Map<string, ToolInfo[]>();
  for (const tool of tools) {
    const source = tool.source.kind === 'builtin' ? 'Built in' : `MCP: ${tool.source.serverName}`;
    groups.set(source, [...(groups.get(source) ?? []), tool]);
  }
  return [...groups].map(([source, list]) => ({ source, tools: list }));
}

/** Every tool models can be offered, with what it does, how risky it is, and a switch. */
export function ToolsSettings() {
  const backend = useBackend();
  const [tools, setTools] = useState<ToolInfo[]>();
  const [error, setError] = useState<ApiFailure>();
  const [switching, setSwitching] = useState<string>();
  const [attempt, setAttempt] = useState(0);

  useEffect(() => {
    let current = true;
    backend
      .call('tools_list')
      .then((list) => {
        if (current) setTools(list);
      })
      .catch((failure: unknown) => {
        if (current) setError(toApiFailure(failure, 'Could not list the tools'));
      });
    return () => {
      current = false;
    };
  }, [backend, attempt]);

  const setEnabled = async (tool: ToolInfo, enabled: boolean) => {
    const show = (value: boolean) =>
      setTools((list) => list?.map((candidate) => (candidate.name === tool.name ? { ...candidate, enabled: value } : candidate)));
    // The switch moves at once; it moves back if the backend refuses.
    show(enabled);
    setSwitching(tool.name);
    setError(undefined);
    try {
      await backend.call('tool_set_enabled', { name: tool.name, enabled } satisfies ToolEnableRequest);
    } catch (failure) {
      show(!enabled);
      setError(toApiFailure(failure, `Could not switch ${tool.name} ${enabled ? 'on' : 'off'}`));
    } finally {
      setSwitching(undefined);
    }
  };

  return (
    <>
      <h3>Tools</h3>
      <p className="muted small">
        Tools models may call. File tools work only inside a topic&apos;s workspace folder. Tools that change things ask
        you first unless an approval rule says otherwise.
      </p>
      {error && <ErrorNotice error={error} onRetry={tools ? undefined : () => setAttempt((n) => n + 1)} onDismiss={() => setError(undefined)} />}
      {!tools && !error && <p className="muted">Loading tools…</p>}
      {tools &&
        groupTools(tools).map((group) => (
          <section key={group.source} className="tool-group">
            <h4>{group.source}</h4>
            <ul className="settings-list">
              {group.tools.map((tool) => (
                <li key={tool.name} className="settings-item tool-item" data-testid="tool-item" data-tool={tool.name}>
                  <div className="settings-item-main">
                    <div className="settings-item-title">
                      <code>{tool.name}</code>
                      {tool.title && <span>{tool.title}</span>}
                      {tool.annotations.readOnly && <span className="badge">read-only</span>}
                      {tool.annotations.destructive && <span className="badge danger">destructive</span>}
                      {tool.annotations.openWorld && <span className="badge">network</span>}
                      <span className={`badge ${tool.defaultDecision === 'allow' ? '' : 'warn'}`} data-testid="tool-default">
                        {tool.defaultDecision === 'allow' ? 'runs without asking' : tool.defaultDecision === 'ask' ? 'asks first' : 'denied'}
                      </span>
                    </div>
                    <p className="small muted">{tool.description}</p>
                  </div>
                  <label className="switch">
                    <input
                      type="checkbox"
                      data-testid="tool-enabled"
                      checked={tool.enabled}
                      disabled={switching === tool.name}
                      onChange={(event) => void setEnabled(tool, event.target.checked)}
                    />
                    <span>{tool.enabled ? 'On' : 'Off'}</span>
                  </label>
                </li>
              ))}
            </ul>
          </section>
        ))}
    </>
  );
}
