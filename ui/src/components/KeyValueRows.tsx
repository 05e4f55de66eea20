import { keyValueRow, type KeyValueRow } from '../settings/mcpForm';

interface KeyValueRowsProps {
  rows: KeyValueRow[];
  onChange: (rows: KeyValueRow[]) => void;
  /** Test ids: `<prefix>-row`, `-key`, `-value`, `-remove`, `-add`. */
  testId: string;
  keyLabel: string;
  keyPlaceholder: string;
  valuePlaceholder: string;
  addLabel: string;
  disabled?: boolean;
}

/**
 * Name/value rows (environment variables, HTTP headers): edit, add and remove. Values are
 * secrets: typed blind, never shown again. A saved row shows its name (fixed: remove it
 * and add another to rename) and whether a value is stored; leaving it empty keeps that.
 */
export function KeyValueRows({ rows, onChange, testId, keyLabel, keyPlaceholder, valuePlaceholder, addLabel, disabled }: KeyValueRowsProps) {
  const update = (id: number, patch: Partial<KeyValueRow>) => onChange(rows.map((row) => (row.id === id ? { ...row, ...patch } : row)));
  return (
    <div className="key-value-rows">
      {rows.map((row, index) => (
        <div key={row.id} className="key-value-row" data-testid={`${testId}-row`}>
          <input
            data-testid={`${testId}-key`}
            value={row.key}
            disabled={disabled}
            readOnly={row.stored !== undefined}
            title={row.stored ? 'Saved names are fixed: remove the row and add another to rename it' : undefined}
            placeholder={keyPlaceholder}
            aria-label={`${keyLabel} ${index + 1}`}
            spellCheck={false}
            autoComplete="off"
            onChange={(event) => update(row.id, { key: event.target.value })}
          />
          <input
            data-testid={`${testId}-value`}
            data-stored={row.stored ? (row.stored.set ? 'set' : 'missing') : undefined}
            type="password"
            value={row.value}
            disabled={disabled}
            placeholder={row.stored ? (row.stored.set ? 'set — leave empty to keep' : 'not set — type a value') : valuePlaceholder}
            aria-label={`Value of ${row.key || `${keyLabel.toLowerCase()} ${index + 1}`}`}
            spellCheck={false}
            autoComplete="off"
            onChange={(event) => update(row.id, { value: event.target.value })}
          />
          <button
            type="button"
            className="icon-button"
            data-testid={`${testId}-remove`}
            aria-label={`Remove ${row.key || `${keyLabel.toLowerCase()} ${index + 1}`}`}
            title="Remove"
            disabled={disabled}
            onClick={() => onChange(rows.filter((candidate) => candidate.id !== row.id))}
          >
            ×
          </button>
        </div>
      ))}
      <button type="button" className="button ghost small" data-testid={`${testId}-add`} disabled={disabled} onClick={() => onChange([...rows, keyValueRow()])}>
        {addLabel}
      </button>
    </div>
  );
}
