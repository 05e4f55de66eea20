import { useEffect, useState } from 'react';
import { toApiFailure, type ApiFailure } from '../backend/backend';
import type { IdRequest, PolicyRule, Topic } from '../protocol.gen';
import { describeRule } from '../settings/ruleForm';
import { useBackend } from './BackendContext';
import { ErrorNotice } from './ErrorNotice';
import { RuleForm } from './RuleForm';

type Editing = { kind: 'none' } | { kind: 'add' } | { kind: 'edit'; id: string };

/** Approval rules: which tool calls run without asking, are denied, or always ask. */
export function RulesSettings({ topics }: { topics: Topic[] }) {
  const backend = useBackend();
  const [rules, setRules] = useState<PolicyRule[]>();
  const [editing, setEditing] = useState<Editing>({ kind: 'none' });
  const [confirmDelete, setConfirmDelete] = useState<string>();
  const [error, setError] = useState<ApiFailure>();

  const [version, setVersion] = useState(0);
  const reload = () => setVersion((n) => n + 1);

  useEffect(() => {
    let current = true;
    backend
      .call('tool_rules_list')
      .then((list) => {
        if (current) setRules(list);
      })
      .catch((failure: unknown) => {
        if (current) setError(toApiFailure(failure, 'Could not list the approval rules'));
      });
    return () => {
      current = false;
    };
  }, [backend, version]);

  const remove = async (id: string) => {
    setError(undefined);
    try {
      await backend.call('tool_rule_delete', { id } satisfies IdRequest);
      setConfirmDelete(undefined);
      reload();
    } catch (failure) {
      setError(toApiFailure(failure, 'Could not delete the rule'));
    }
  };

  const saved = () => {
    setEditing({ kind: 'none' });
    reload();
  };
  const titleOf = ({ scope }: PolicyRule) => (scope.kind === 'topic' ? topics.find((topic) => topic.id === scope.topicId)?.title : undefined);

  return (
    <>
      <h3>Approval rules</h3>
      <p className="muted small">
        Rules decide tool calls before you are asked: allow them, deny them, or always ask. A matching deny always wins;
        otherwise a topic’s rules come before the global ones, and ask before allow. Without a matching rule, read-only
        tools run and the others ask. “Always” answers on an approval card add rules here.
      </p>
      {error && <ErrorNotice error={error} onDismiss={() => setError(undefined)} />}
      {rules && rules.length === 0 && <p className="muted">No rules yet.</p>}
      <ul className="settings-list">
        {rules?.map((rule) =>
          editing.kind === 'edit' && editing.id === rule.id ? (
            <li key={rule.id} className="settings-item editing">
              <RuleForm rule={rule} topics={topics} onSaved={saved} onCancel={() => setEditing({ kind: 'none' })} />
            </li>
          ) : (
            <li key={rule.id} className="settings-item" data-testid="rule-item" data-rule-id={rule.id}>
              <div className="settings-item-main">
                <div className="settings-item-title">
                  <span className={`badge decision-${rule.decision}`}>{rule.decision}</span>
                  <span data-testid="rule-summary">{describeRule(rule, titleOf(rule))}</span>
                </div>
                {rule.expiresAt && <p className="small muted">Until {new Date(rule.expiresAt).toLocaleString()}</p>}
              </div>
              {confirmDelete === rule.id ? (
                <div className="provider-actions">
                  <span className="small">Delete this rule?</span>
                  <button type="button" className="button danger small" data-testid="rule-delete-confirm" onClick={() => void remove(rule.id)}>
                    Delete
                  </button>
                  <button type="button" className="button ghost small" onClick={() => setConfirmDelete(undefined)}>
                    Cancel
                  </button>
                </div>
              ) : (
                <div className="provider-actions">
                  <button type="button" className="button small" data-testid="rule-edit" onClick={() => setEditing({ kind: 'edit', id: rule.id })}>
                    Edit
                  </button>
                  <button type="button" className="button ghost small" data-testid="rule-delete" onClick={() => setConfirmDelete(rule.id)}>
                    Delete
                  </button>
                </div>
              )}
            </li>
          ),
        )}
      </ul>
      {editing.kind === 'add' ? (
        <div className="card">
          <h3>Add a rule</h3>
          <RuleForm topics={topics} onSaved={saved} onCancel={() => setEditing({ kind: 'none' })} />
        </div>
      ) : (
        <button type="button" className="button primary" data-testid="rule-add" onClick={() => setEditing({ kind: 'add' })}>
          Add rule
        </button>
      )}
    </>
  );
}
