import { useState } from 'react';
import type { ModelRef, Provider } from '../protocol.gen';
import { modelOptions } from './ModelPicker';
import { usePopover } from './usePopover';

interface AddModelButtonProps {
  providers: Provider[];
  /** Keys (see `modelKey`) of the models already answering this turn. */
  taken: string[];
  onAdd: (model: ModelRef) => Promise<void>;
}

/** "+ Add model": asks one more model to answer this turn, beside the others. */
export function AddModelButton({ providers, taken, onAdd }: AddModelButtonProps) {
  const { open, setOpen, ref, panelRef } = usePopover<HTMLDivElement>();
  const [adding, setAdding] = useState(false);
  const options = modelOptions(providers);
  const free = options.filter((option) => !taken.includes(option.key));

  const add = (model: ModelRef) => {
    setOpen(false);
    setAdding(true);
    void onAdd(model).finally(() => setAdding(false));
  };

  return (
    <div className="add-model" ref={ref}>
      <button
        type="button"
        className="button ghost small"
        data-testid="add-model-button"
        aria-haspopup="menu"
        aria-expanded={open}
        disabled={adding}
        title={free.length === 0 ? 'Every model you have already answers this message' : 'Ask one more model to answer this message'}
        onClick={() => setOpen(!open)}
      >
        {adding ? 'Asking…' : '+ Add model'}
      </button>
      {open && (
        <ul className="popover-menu" role="menu" aria-label="Model to add" ref={panelRef}>
          {options.map((option) => {
            const answering = taken.includes(option.key);
            return (
              <li key={option.key} role="none">
                <button
                  type="button"
                  role="menuitem"
                  data-testid="add-model-option"
                  data-model={option.model}
                  disabled={answering}
                  onClick={() => add(option.ref)}
                >
                  <span>{option.model}</span>
                  <span className="muted small">
                    {option.provider.name}
                    {answering ? ' · already answering' : ''}
                  </span>
                </button>
              </li>
            );
          })}
        </ul>
      )}
    </div>
  );
}
