import type { ApiError } from '../protocol.gen';

/**
 * Errors by form field, keyed by the backend's dotted field path (`tool`,
 * `conditions.0.value`, `scope.topicId`, …). `''` holds an error that belongs to no
 * one field (shown at the top of the form).
 */
export type FieldErrors = Readonly<Record<string, string>>;

export const NO_ERRORS: FieldErrors = {};

/**
 * Where a backend error goes in a form: under its `field` when the form shows that field
 * (or the closest parent it shows, e.g. `conditions.0` for `conditions.0.value.x`), else
 * at the top.
 */
export function fieldErrorsFrom(error: ApiError, shownFields: readonly string[]): FieldErrors {
  const field = error.field;
  if (error.kind === 'bad_request' && field) {
    // Shown next to its field, the message need not name the field again.
    const prefix = `${field}: `;
    const message = error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
    const parts = field.split('.');
    for (let length = parts.length; length > 0; length--) {
      const candidate = parts.slice(0, length).join('.');
      if (shownFields.includes(candidate)) return { [candidate]: message };
    }
  }
  return { '': error.message };
}

export function hasErrors(errors: FieldErrors): boolean {
  return Object.keys(errors).length > 0;
}
