import { CAPABILITIES, type Capability, type CapabilityRow } from '../settings/capabilities';

interface CapabilitiesEditorProps {
  rows: CapabilityRow[];
  onToggle: (row: CapabilityRow, capability: Capability) => void;
}

const SOURCE_LABEL: Record<CapabilityRow['source'], string> = {
  set: 'set by you',
  guessed: 'guessed from the name',
  new: 'guessed when saved',
};

/** What each model of a provider can do: tools, reasoning, vision; guessed until the user sets them. */
export function CapabilitiesEditor({ rows, onToggle }: CapabilitiesEditorProps) {
  if (rows.length === 0) return null;
  return (
    <details className="capabilities" data-testid="capabilities">
      <summary className="field-label">
        Model capabilities <span className="muted small">({rows.length === 1 ? '1 model' : `${rows.length} models`})</span>
      </summary>
      <p className="field-help">
        Colloquy guesses what a model can do from its name. Correct it here if a guess is wrong; what you set is kept.
      </p>
      <table className="capabilities-table">
        <thead>
          <tr>
            <th scope="col">Model</th>
            {CAPABILITIES.map((capability) => (
              <th key={capability.key} scope="col" title={capability.help}>
                {capability.label}
              </th>
            ))}
            <th scope="col">
              <span className="visually-hidden">Source</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={row.model} data-testid="capability-row" data-model={row.model} data-source={row.source}>
              <th scope="row" className="capabilities-model">
                {row.model}
              </th>
              {CAPABILITIES.map((capability) => (
                <td key={capability.key}>
                  <input
                    type="checkbox"
                    data-testid="capability"
                    data-model={row.model}
                    data-capability={capability.key}
                    aria-label={`${capability.label} for ${row.model}`}
                    checked={row[capability.key]}
                    onChange={() => onToggle(row, capability.key)}
                  />
                </td>
              ))}
              <td className={`capabilities-source ${row.source}`}>{SOURCE_LABEL[row.source]}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </details>
  );
}
