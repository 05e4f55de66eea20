import type { PlanEntry, PlanStatus } from '../chat/agentSession';

const STATUS_LABEL: Record<PlanStatus, string> = { pending: 'To do', in_progress: 'In progress', completed: 'Done' };
const STATUS_MARK: Record<PlanStatus, string> = { pending: '○', in_progress: '◐', completed: '✓' };

/** An agent's plan for its turn as a checklist, as the agent last revised it (it updates live). */
export function AgentPlan({ entries }: { entries: PlanEntry[] }) {
  const done = entries.filter((entry) => entry.status === 'completed').length;
  return (
    <section className="agent-plan" data-testid="agent-plan" aria-label="The agent's plan">
      <header className="agent-plan-title small muted">
        Plan · {done} of {entries.length} done
      </header>
      <ol>
        {entries.map((entry, index) => (
          <li key={index} className={`agent-plan-entry ${entry.status}`} data-testid="agent-plan-entry" data-status={entry.status}>
            <span className="agent-plan-mark" role="img" aria-label={STATUS_LABEL[entry.status]} title={STATUS_LABEL[entry.status]}>
              {STATUS_MARK[entry.status]}
            </span>
            <span className="agent-plan-content">{entry.content}</span>
            {entry.priority && (
              <span className={`agent-plan-priority ${entry.priority} small muted`} data-testid="agent-plan-priority" title="Priority">
                {entry.priority}
              </span>
            )}
          </li>
        ))}
      </ol>
    </section>
  );
}
