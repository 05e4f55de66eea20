import { memo, type ReactNode } from 'react';
import {
  argumentsSummary,
  PHASE_LABEL,
  progressFraction,
  progressText,
  toolInputText,
  toolPhase,
  type ToolPart,
  type ToolPhase,
  type ToolProgress,
} from '../chat/tools';
import { ApprovalCard } from './ApprovalCard';
import { useApprovalsState } from './ApprovalsContext';
import { ToolOutputView } from './ToolOutputView';

interface ToolCardProps {
  part: ToolPart;
  /** The reply is being written (a call without a result may be running). */
  isLive: boolean;
  /** Live progress of a running call (transient, only while the reply streams). */
  progress?: ToolProgress | undefined;
}

/** One tool call of a reply: what was called with what, where it is, and what came back. */
export const ToolCard = memo(function ToolCard({ part, isLive, progress }: ToolCardProps) {
  if (part.state === 'approval-requested' && part.approval) return <WaitingToolCard part={part} approvalId={part.approval.id} />;
  return <ToolCardBody part={part} phase={toolPhase(part, isLive)} progress={progress} />;
});

/** A call waiting for an answer; once answered here, it shows as answered until the reply says more. */
function WaitingToolCard({ part, approvalId }: { part: ToolPart; approvalId: string }) {
  const answer = useApprovalsState().answered.get(approvalId);
  const phase: ToolPhase = answer ? (answer.state === 'denied' ? 'denied' : 'allowed') : 'waiting';
  return (
    <ToolCardBody part={part} phase={phase}>
      <ApprovalCard part={part} approvalId={approvalId} />
    </ToolCardBody>
  );
}

interface ToolCardBodyProps {
  part: ToolPart;
  phase: ToolPhase;
  progress?: ToolProgress | undefined;
  /** The approval card, for a call that waits for the user. */
  children?: ReactNode;
}

function ToolCardBody({ part, phase, progress, children }: ToolCardBodyProps) {
  const summary = argumentsSummary(part.input);
  const asking = children !== undefined;
  return (
    <section
      className={`tool-card ${phase}`}
      data-testid="tool-card"
      data-tool-name={part.toolName}
      data-tool-call-id={part.toolCallId}
      data-state={part.state}
      data-phase={phase}
      aria-label={`Tool call ${part.toolName}: ${PHASE_LABEL[phase]}`}
    >
      <header className="tool-card-header">
        <span className="tool-name">{part.toolName}</span>
        <span className={`tool-phase ${phase}`} data-testid="tool-phase">
          {phase === 'running' && <span className="tool-spinner" aria-hidden="true" />}
          {PHASE_LABEL[phase]}
        </span>
        {!asking && summary && (
          <span className="tool-summary" title={summary}>
            {summary}
          </span>
        )}
      </header>
      {phase === 'running' && progress && <ToolProgressLine progress={progress} />}
      {children ?? (
        <details className="tool-arguments" data-testid="tool-arguments">
          <summary className="small">Arguments</summary>
          <pre>{toolInputText(part.input)}</pre>
        </details>
      )}
      {part.state === 'output-available' && <ToolOutputView output={part.output} toolName={part.toolName} />}
      {part.state === 'output-error' && (
        <div className="tool-error" data-testid="tool-error" role="alert">
          {part.errorText ?? 'The tool failed.'}
        </div>
      )}
      {part.state === 'output-denied' && (
        <p className="tool-denied small" data-testid="tool-denied">
          Not run{part.approval?.reason ? `: ${part.approval.reason}` : '.'}
        </p>
      )}
    </section>
  );
}

function ToolProgressLine({ progress }: { progress: ToolProgress }) {
  const fraction = progressFraction(progress);
  return (
    <div className="tool-progress" data-testid="tool-progress" role="status">
      {fraction !== undefined && <progress value={fraction} max={1} />}
      <span className="small muted">{progressText(progress)}</span>
    </div>
  );
}
