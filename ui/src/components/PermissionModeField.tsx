import { PERMISSION_MODES, type PermissionMode } from '../agents/sessionForm';

interface PermissionModeFieldProps {
  value: string;
  testId: string;
  disabled?: boolean;
  onChange: (mode: PermissionMode) => void;
}

/** How much the agent may do without asking: a select, with what the chosen mode means under it. */
export function PermissionModeField({ value, testId, disabled, onChange }: PermissionModeFieldProps) {
  const chosen = PERMISSION_MODES.find((mode) => mode.id === value);
  return (
    <label className="field">
      <span className="field-label">Permission mode</span>
      <select
        data-testid={testId}
        value={value}
        disabled={disabled}
        onChange={(event) => {
          const mode = PERMISSION_MODES.find((candidate) => candidate.id === event.target.value);
          if (mode) onChange(mode.id);
        }}
      >
        {!chosen && <option value={value}>{value}</option>}
        {PERMISSION_MODES.map((mode) => (
          <option key={mode.id} value={mode.id}>
            {mode.label}
          </option>
        ))}
      </select>
      <span className="field-help">{chosen?.help ?? 'A mode this version of Colloquy does not know.'}</span>
    </label>
  );
}
