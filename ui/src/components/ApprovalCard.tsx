import { useState, type FormEvent } from 'react';
import type { ApprovalAnswer } from '../chat/approvals';
import { previewParts } from '../chat/diff';
import { alwaysCovers, parseEditedArguments, prettyJson, type ToolPart } from '../chat/tools';
import type { Approval } from '../protocol.gen';
import { useApprovals, useApprovalsState } from './ApprovalsContext';
import { DiffView } from './LazyViews';
import { ErrorNotice } from './ErrorNotice';
import { fieldErrorsFrom } from '../settings/fieldErrors';

interface ApprovalCardProps {
  /** A call in state `approval-requested`. */
  part: ToolPart;
  approvalId: string;
}

type Mode = 'choose' | 'deny' | 'edit';

/**
 * A tool call that waits for the user: its full arguments, what it would change (a diff
 * for file edits), and the answers. Every button sends at most one answer; the reply goes
 * on by itself once the last call it waits for is answered.
 */
export function ApprovalCard({ part, approvalId }: ApprovalCardProps) {
  const approvals = useApprovals();
  const state = useApprovalsState();
  const [mode, setMode] = useState<Mode>('choose');
  const pending = state.pending?.find((approval) => approval.id === approvalId);
  const answer = state.answered.get(approvalId);
  const answering = state.answering.has(approvalId);
  const failure = state.failures.get(approvalId);
  // Edited arguments the tool's schema refused: shown at the editor, to be fixed there.
  const editProblem = failure ? fieldErrorsFrom(failure, ['updatedInput']).updatedInput : undefined;
  const input = pending?.input ?? part.input;
  // "Always" for fetch_url opens one host, not the tool: the buttons say so.
  const covers = alwaysCovers(part.toolName, input);
  const allowing = covers ? `${part.toolName} for ${covers}` : part.toolName;

  if (answer) {
    return (
      <>
        <ApprovalAnswerNote answer={answer} />
        <details className="tool-arguments" data-testid="tool-arguments">
          <summary className="small">Arguments</summary>
          <pre>{prettyJson(answer.input)}</pre>
        </details>
      </>
    );
  }

  const respond = (reply: ApprovalAnswer) => void approvals.respond(approvalId, reply);
  const preview = pending?.preview ? previewParts(pending.preview) : undefined;

  return (
    <div className="approval-card" data-testid="approval-card" data-approval-id={approvalId} aria-busy={answering}>
      <p className="approval-question">
        Allow <strong>{part.toolName}</strong> to run with these arguments?
      </p>
      {preview?.note && (
        <p className="approval-note small" data-testid="approval-note">
          {preview.note}
        </p>
      )}
      {preview?.diff && <DiffView diff={preview.diff} />}
      {mode === 'edit' ? (
        <EditArgumentsForm
          initial={prettyJson(input)}
          busy={answering}
          problem={editProblem}
          onCancel={() => setMode('choose')}
          onAllow={(updatedInput) => respond({ decision: 'approve', scope: 'once', updatedInput })}
        />
      ) : (
        <pre className="approval-arguments" data-testid="approval-arguments">
          {prettyJson(input)}
        </pre>
      )}
      {mode === 'deny' && (
        <DenyForm busy={answering} onCancel={() => setMode('choose')} onDeny={(reason) => respond({ decision: 'deny', reason })} />
      )}
      {mode === 'choose' && (
        <div className="approval-actions" role="group" aria-label={`Answer the ${part.toolName} call`}>
          <button
            type="button"
            className="button primary small"
            data-testid="approval-allow-once"
            disabled={answering}
            onClick={() => respond({ decision: 'approve', scope: 'once' })}
          >
            {answering ? 'Sending…' : 'Allow once'}
          </button>
          <button
            type="button"
            className="button small"
            data-testid="approval-allow-topic"
            disabled={answering}
            title={`Allow ${allowing} now and from now on in this topic, without asking`}
            onClick={() => respond({ decision: 'approve', scope: 'topic' })}
          >
            {covers ? `Always for this topic (only ${covers})` : 'Always for this topic'}
          </button>
          <button
            type="button"
            className="button small"
            data-testid="approval-allow-global"
            disabled={answering}
            title={`Allow ${allowing} now and from now on in every topic, without asking`}
            onClick={() => respond({ decision: 'approve', scope: 'global' })}
          >
            {covers ? `Always (everywhere, only ${covers})` : 'Always (everywhere)'}
          </button>
          <button type="button" className="button ghost small" data-testid="approval-edit" disabled={answering} onClick={() => setMode('edit')}>
            Edit arguments…
          </button>
          <button type="button" className="button ghost small danger-text" data-testid="approval-deny" disabled={answering} onClick={() => setMode('deny')}>
            Deny…
          </button>
        </div>
      )}
      {failure && !(editProblem !== undefined && mode === 'edit') && <ErrorNotice error={failure} hint="Your answer was not recorded. Try again; if the topic was stopped, there is nothing left to answer." />}
    </div>
  );
}

/** What was answered, until the reply's stored message shows the call's outcome. */
function ApprovalAnswerNote({ answer }: { answer: Approval }) {
  const approved = answer.state === 'approved';
  return (
    <div className={`approval-answer ${answer.state}`} data-testid="approval-answer" data-answer={answer.state} role="status">
      {approved ? 'Allowed — it runs when the reply goes on.' : `Denied${answer.reason ? `: ${answer.reason}` : '.'}`}
    </div>
  );
}

interface DenyFormProps {
  busy: boolean;
  onDeny: (reason: string) => void;
  onCancel: () => void;
}

function DenyForm({ busy, onDeny, onCancel }: DenyFormProps) {
  const [reason, setReason] = useState('');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    onDeny(reason);
  };
  return (
    <form className="approval-form" onSubmit={submit}>
      <label className="field">
        <span className="field-label">Reason (optional)</span>
        <input
          data-testid="approval-deny-reason"
          value={reason}
          maxLength={2000}
          autoFocus
          onChange={(event) => setReason(event.target.value)}
          placeholder="Told to the model, e.g. “write to drafts/ instead”"
        />
      </label>
      <div className="form-actions">
        <button type="button" className="button ghost small" onClick={onCancel} disabled={busy}>
          Cancel
        </button>
        <button type="submit" className="button danger small" data-testid="approval-deny-confirm" disabled={busy}>
          {busy ? 'Sending…' : 'Deny'}
        </button>
      </div>
    </form>
  );
}

interface EditArgumentsFormProps {
  initial: string;
  busy: boolean;
  /** Why the backend refused the last arguments sent (they do not fit the tool's schema). */
  problem: string | undefined;
  onAllow: (input: Record<string, unknown>) => void;
  onCancel: () => void;
}

/**
 * The call's arguments as editable JSON; invalid JSON is refused here, before anything is
 * sent, and arguments that do not fit the tool are refused by the backend and shown here.
 */
function EditArgumentsForm({ initial, busy, problem, onAllow, onCancel }: EditArgumentsFormProps) {
  const [text, setText] = useState(initial);
  const [localError, setError] = useState<string>();
  // The backend's problem stays until the arguments are changed.
  const [problemSeen, setProblemSeen] = useState<string>();
  const error = localError ?? (problem !== problemSeen ? problem : undefined);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const parsed = parseEditedArguments(text);
    if ('error' in parsed) {
      setError(parsed.error);
      return;
    }
    setError(undefined);
    setProblemSeen(undefined);
    onAllow(parsed.value);
  };
  return (
    <form className="approval-form" onSubmit={submit} noValidate>
      <label className="field">
        <span className="field-label">Arguments (JSON)</span>
        <textarea
          className="json-editor"
          data-testid="approval-edit-input"
          value={text}
          rows={Math.min(16, Math.max(4, text.split('\n').length + 1))}
          spellCheck={false}
          autoFocus
          aria-invalid={error !== undefined}
          onChange={(event) => {
            setText(event.target.value);
            setError(undefined);
            setProblemSeen(problem);
          }}
        />
        {error && (
          <div className="field-error" data-testid="approval-edit-error" role="alert">
            {error}
          </div>
        )}
      </label>
      <div className="form-actions">
        <button type="button" className="button ghost small" onClick={onCancel} disabled={busy}>
          Cancel
        </button>
        <button type="submit" className="button primary small" data-testid="approval-edit-confirm" disabled={busy}>
          {busy ? 'Sending…' : 'Allow with these arguments'}
        </button>
      </div>
    </form>
  );
}
