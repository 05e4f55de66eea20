import { useState } from 'react';
import { toApiFailure, type ApiFailure } from '../backend/backend';
import type { Provider, ProviderRequest } from '../protocol.gen';
import { useBackend } from './BackendContext';
import { ErrorNotice } from './ErrorNotice';
import { formatLabel, ProviderForm } from './ProviderForm';
import { useSecretStore } from './useSecretStore';

interface ProvidersSettingsProps {
  providers: Provider[];
  onProvidersChanged: () => void;
}

type Editing = { kind: 'none' } | { kind: 'add' } | { kind: 'edit'; provider: Provider };

/** Providers: list, add, edit, delete. New topics use the first provider's default model. */
export function ProvidersSettings({ providers, onProvidersChanged }: ProvidersSettingsProps) {
  const backend = useBackend();
  const [editing, setEditing] = useState<Editing>({ kind: 'none' });
  const [confirmDelete, setConfirmDelete] = useState<string>();
  const [error, setError] = useState<ApiFailure>();
  const secretStore = useSecretStore();

  const remove = async (provider: Provider) => {
    setError(undefined);
    try {
      await backend.call('provider_delete', { providerId: provider.id } satisfies ProviderRequest);
      setConfirmDelete(undefined);
      onProvidersChanged();
    } catch (failure) {
      setError(toApiFailure(failure, `Could not delete ${provider.name}`));
    }
  };

  const saved = () => {
    setEditing({ kind: 'none' });
    onProvidersChanged();
  };

  return (
    <>
      <h3>Providers</h3>
      <p className="muted small">
        A topic uses the model picked in its header; without one, it uses the default model of the first provider listed here.
      </p>
      {secretStore && (
        <p className="muted small" data-testid="secret-store">
          API keys are stored in {secretStore}.
        </p>
      )}
      {error && <ErrorNotice error={error} onDismiss={() => setError(undefined)} />}
      <ul className="provider-list">
        {providers.map((provider, index) =>
          editing.kind === 'edit' && editing.provider.id === provider.id ? (
            <li key={provider.id} className="provider-item editing">
              <ProviderForm provider={provider} onSaved={saved} onCancel={() => setEditing({ kind: 'none' })} />
            </li>
          ) : (
            <li key={provider.id} className="provider-item" data-testid="provider-item" data-provider-id={provider.id}>
              <div className="provider-summary">
                <div className="provider-name">
                  {provider.name}
                  {index === 0 && <span className="badge">default</span>}
                  {provider.kind === 'demo' && <span className="badge">scripted demo</span>}
                </div>
                <div className="muted small">
                  <span data-testid="provider-item-format" data-format={provider.format}>
                    {formatLabel(provider.format)}
                  </span>{' '}
                  · {provider.baseUrl} · {provider.defaultModel} · {provider.hasApiKey ? 'key stored' : 'no key'}
                </div>
              </div>
              {confirmDelete === provider.id ? (
                <div className="provider-actions">
                  <span className="small">Delete this provider?</span>
                  <button type="button" className="button danger small" onClick={() => remove(provider)}>
                    Delete
                  </button>
                  <button type="button" className="button ghost small" onClick={() => setConfirmDelete(undefined)}>
                    Cancel
                  </button>
                </div>
              ) : (
                <div className="provider-actions">
                  {provider.kind !== 'demo' && (
                    <button
                      type="button"
                      className="button small"
                      data-testid="provider-edit"
                      onClick={() => setEditing({ kind: 'edit', provider })}
                    >
                      Edit
                    </button>
                  )}
                  <button type="button" className="button ghost small" onClick={() => setConfirmDelete(provider.id)}>
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
          <h3>Add a provider</h3>
          <ProviderForm onSaved={saved} onCancel={() => setEditing({ kind: 'none' })} />
        </div>
      ) : (
        <button type="button" className="button primary" data-testid="add-provider-button" onClick={() => setEditing({ kind: 'add' })}>
          Add provider
        </button>
      )}
    </>
  );
}
