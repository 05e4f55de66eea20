import { useState } from 'react';
import { toApiFailure, type ApiFailure } from '../backend/backend';
import type { Provider } from '../protocol.gen';
import { useBackend } from './BackendContext';
import { ErrorNotice } from './ErrorNotice';
import { ProviderForm } from './ProviderForm';

interface OnboardingProps {
  onProviderReady: (provider: Provider) => void;
}

/** First run: no provider yet. Try the scripted demo model, or add a real provider. */
export function Onboarding({ onProviderReady }: OnboardingProps) {
  const backend = useBackend();
  const [adding, setAdding] = useState(false);
  const [startingDemo, setStartingDemo] = useState(false);
  const [error, setError] = useState<ApiFailure>();

  const startDemo = async () => {
    setError(undefined);
    setStartingDemo(true);
    try {
      onProviderReady(await backend.call('provider_demo'));
    } catch (failure) {
      setError(toApiFailure(failure, 'Could not start the demo provider'));
    } finally {
      setStartingDemo(false);
    }
  };

  return (
    <main className="center-screen" data-testid="onboarding">
      <div className="card onboarding">
        <h1>Welcome to Colloquy</h1>
        <p className="muted">Colloquy needs a model provider to talk to. Pick how to start.</p>
        {error && <ErrorNotice error={error} onRetry={startDemo} />}
        {adding ? (
          <section aria-label="Add provider">
            <h2>Add a provider</h2>
            <ProviderForm onSaved={onProviderReady} onCancel={() => setAdding(false)} />
          </section>
        ) : (
          <div className="choices">
            <button type="button" className="choice" data-testid="demo-provider-button" onClick={startDemo} disabled={startingDemo}>
              <span className="choice-title">{startingDemo ? 'Starting the demo…' : 'Try the demo provider'}</span>
              <span className="choice-text">
                A local, scripted demo model that runs on this computer. It replays canned answers — it is not a real AI. No
                account or key needed.
              </span>
            </button>
            <button type="button" className="choice" data-testid="add-provider-button" onClick={() => setAdding(true)}>
              <span className="choice-title">Add provider</span>
              <span className="choice-text">
                Connect OpenAI, Anthropic, Gemini or any OpenAI-compatible API (Ollama, LM Studio, OpenRouter, …) with its base URL and key.
              </span>
            </button>
          </div>
        )}
      </div>
    </main>
  );
}
