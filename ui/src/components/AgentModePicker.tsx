import { useState } from 'react';
import { toApiFailure, type ApiFailure } from '../backend/backend';
import type { AgentMode } from '../chat/agentSession';
import type { AgentModeApplied, AgentModeRequest } from '../protocol.gen';
import { useBackend } from './BackendContext';
import { ErrorNotice } from './ErrorNotice';

interface AgentModePickerProps {
  sessionId: string;
  /** The modes the agent offered when its session last started (empty: none). */
  modes: readonly AgentMode[];
  /** The mode its replies last said it is in. */
  currentMode: string | undefined;
}

interface Asked {
  modeId: string;
  applied: AgentModeApplied;
  /** The mode the replies said when it was asked: once they say another, they are the truth again. */
  over: string | undefined;
}

/**
 * An ACP agent's mode, in the composer's bar: a choice of the modes it offers (switched with
 * `agent_session_set_mode`, mid-turn too), or just its name when it offers no choice.
 */
export function AgentModePicker({ sessionId, modes, currentMode }: AgentModePickerProps) {
  const backend = useBackend();
  const [asked, setAsked] = useState<Asked>();
  const [error, setError] = useState<ApiFailure>();
  const [switching, setSwitching] = useState(false);
  const pending = asked !== undefined && asked.over === currentMode ? asked : undefined;
  const shown = pending?.modeId ?? currentMode;
  if (modes.length === 0) {
    if (currentMode === undefined) return null;
    return (
      <span className="agent-mode small muted" data-testid="agent-mode" data-mode={currentMode} title="The agent's mode">
        Mode: {currentMode}
      </span>
    );
  }
  const choose = (modeId: string) => {
    setSwitching(true);
    setError(undefined);
    const request: AgentModeRequest = { id: sessionId, modeId };
    backend.call('agent_session_set_mode', request).then(
      (change) => {
        setAsked({ modeId: change.modeId, applied: change.applied, over: currentMode });
        setSwitching(false);
      },
      (failure: unknown) => {
        setError(toApiFailure(failure, 'The agent could not switch modes'));
        setSwitching(false);
      },
    );
  };
  const description = modes.find((mode) => mode.id === shown)?.description;
  return (
    <span className="agent-mode small" data-testid="agent-mode" data-mode={shown ?? ''}>
      <label title={description ?? "The agent's mode: how it works (its own modes)"}>
        <span className="muted">Mode </span>
        <select data-testid="agent-mode-select" value={shown ?? ''} disabled={switching} onChange={(event) => choose(event.target.value)}>
          {shown === undefined && <option value="">—</option>}
          {shown !== undefined && !modes.some((mode) => mode.id === shown) && <option value={shown}>{shown}</option>}
          {modes.map((mode) => (
            <option key={mode.id} value={mode.id}>
              {mode.name}
            </option>
          ))}
        </select>
      </label>
      {pending?.applied === 'next_start' && (
        <span className="muted" data-testid="agent-mode-pending">
          switches when the agent next starts
        </span>
      )}
      {error && <ErrorNotice error={error} onDismiss={() => setError(undefined)} />}
    </span>
  );
}
