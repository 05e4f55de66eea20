import { useEffect, useState, type FormEvent } from 'react';
import { toApiFailure, type ApiFailure } from '../backend/backend';
import type { ModelPrice } from '../protocol.gen';
import { fieldErrorsFrom, NO_ERRORS, type FieldErrors } from '../settings/fieldErrors';
import { draftFromPrice, EMPTY_PRICE, priceInputFromDraft, type PriceDraft } from '../usage/priceForm';
import { useBackend } from './BackendContext';
import { ErrorNotice } from './ErrorNotice';

const FIELDS = ['model', 'inputUsd', 'cachedInputUsd', 'outputUsd'] as const;

/** The price table: built-in defaults and the user's prices, editable. Costs everywhere follow it. */
export function UsagePrices({ onChanged }: { onChanged: () => void }) {
  const backend = useBackend();
  const [prices, setPrices] = useState<ModelPrice[]>();
  const [loadError, setLoadError] = useState<ApiFailure>();
  const [attempt, setAttempt] = useState(0);
  const [draft, setDraft] = useState<PriceDraft>(EMPTY_PRICE);
  const [errors, setErrors] = useState<FieldErrors>(NO_ERRORS);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    let current = true;
    backend
      .call('usage_prices')
      .then((loaded) => {
        if (!current) return;
        setPrices(loaded);
        setLoadError(undefined);
      })
      .catch((failure: unknown) => {
        if (current) setLoadError(toApiFailure(failure, 'Could not load the prices'));
      });
    return () => {
      current = false;
    };
  }, [backend, attempt]);

  const run = async (action: () => Promise<ModelPrice[]>, what: string) => {
    setBusy(true);
    setErrors(NO_ERRORS);
    try {
      setPrices(await action());
      setDraft(EMPTY_PRICE);
      onChanged();
    } catch (failure) {
      setErrors(fieldErrorsFrom(toApiFailure(failure, what), FIELDS));
    } finally {
      setBusy(false);
    }
  };

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const result = priceInputFromDraft(draft);
    if ('errors' in result) {
      setErrors(result.errors);
      return;
    }
    void run(() => backend.call('usage_price_set', result.input), 'Could not save the price');
  };

  const field = (name: (typeof FIELDS)[number], label: string, placeholder: string) => (
    <label className="field">
      <span className="field-label">{label}</span>
      <input
        data-testid={`price-${name}`}
        value={draft[name]}
        placeholder={placeholder}
        inputMode={name === 'model' ? 'text' : 'decimal'}
        autoComplete="off"
        onChange={(event) => setDraft({ ...draft, [name]: event.target.value })}
      />
      {errors[name] && (
        <div className="field-error" data-testid="form-error" data-field={name} role="alert">
          {errors[name]}
        </div>
      )}
    </label>
  );

  return (
    <>
      <h4>Prices</h4>
      <p className="muted small">
        US dollars per million tokens. A price also applies to dated versions of its model (gpt-4o prices gpt-4o-2024-08-06)
        and to the model behind a router’s prefix (openai/gpt-4o). Defaults are list prices when this version was made: check
        your provider’s.
      </p>
      <form className="provider-form price-form" data-testid="price-form" onSubmit={submit} noValidate>
        {errors[''] && (
          <div className="form-error" data-testid="form-error" role="alert">
            {errors['']}
          </div>
        )}
        <div className="price-fields">
          {field('model', 'Model', 'e.g. gpt-4o')}
          {field('inputUsd', 'Input', '2.50')}
          {field('cachedInputUsd', 'Cached input', 'same as input')}
          {field('outputUsd', 'Output', '10.00')}
        </div>
        <div className="form-actions">
          {draft !== EMPTY_PRICE && (
            <button type="button" className="button ghost" onClick={() => { setDraft(EMPTY_PRICE); setErrors(NO_ERRORS); }}>
              Clear
            </button>
          )}
          <button type="submit" className="button primary" data-testid="price-save" disabled={busy}>
            {busy ? 'Saving…' : 'Save price'}
          </button>
        </div>
      </form>
      {loadError && <ErrorNotice error={loadError} onRetry={() => setAttempt((n) => n + 1)} />}
      {prices && (
        <table className="audit-table usage-table" data-testid="price-table">
          <thead>
            <tr>
              <th scope="col">Model</th>
              <th scope="col">Input</th>
              <th scope="col">Cached input</th>
              <th scope="col">Output</th>
              <th scope="col" aria-label="Actions" />
            </tr>
          </thead>
          <tbody>
            {prices.map((price) => (
              <tr key={price.model} data-model={price.model} data-source={price.source}>
                <td>
                  {price.model}
                  {price.source === 'custom' && <span className="muted small"> (yours)</span>}
                </td>
                <td>${price.inputUsd}</td>
                <td>{price.cachedInputUsd === undefined ? <span className="muted">as input</span> : `$${price.cachedInputUsd}`}</td>
                <td>${price.outputUsd}</td>
                <td className="row-actions">
                  <button type="button" className="button small ghost" onClick={() => setDraft(draftFromPrice(price))}>
                    Edit
                  </button>
                  {price.source === 'custom' && (
                    <button
                      type="button"
                      className="button small ghost"
                      data-testid="price-reset"
                      disabled={busy}
                      onClick={() => void run(() => backend.call('usage_price_reset', { model: price.model }), 'Could not reset the price')}
                    >
                      Reset
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}
