import type { ModelPrice, ModelPriceInput } from '../protocol.gen';
import type { FieldErrors } from '../settings/fieldErrors';

/** The price form as typed: USD per million tokens, as text. */
export interface PriceDraft {
  model: string;
  inputUsd: string;
  cachedInputUsd: string;
  outputUsd: string;
}

export const EMPTY_PRICE: PriceDraft = { model: '', inputUsd: '', cachedInputUsd: '', outputUsd: '' };

export function draftFromPrice(price: ModelPrice): PriceDraft {
  return {
    model: price.model,
    inputUsd: String(price.inputUsd),
    cachedInputUsd: price.cachedInputUsd === undefined ? '' : String(price.cachedInputUsd),
    outputUsd: String(price.outputUsd),
  };
}

function amount(text: string): number | undefined {
  const trimmed = text.trim().replace(/^\$/, '');
  if (trimmed === '' || !/^\d*\.?\d+$|^\d+\.$/.test(trimmed)) return undefined;
  const value = Number(trimmed);
  return Number.isFinite(value) ? value : undefined;
}

/** The request for `usage_price_set`, or what is wrong with the draft, by field. */
export function priceInputFromDraft(draft: PriceDraft): { input: ModelPriceInput } | { errors: FieldErrors } {
  const errors: Record<string, string> = {};
  const model = draft.model.trim();
  if (model === '') errors.model = 'Name the model, as the provider spells it.';
  const inputUsd = amount(draft.inputUsd);
  if (inputUsd === undefined) errors.inputUsd = 'A price in dollars per million tokens, e.g. 2.5.';
  const outputUsd = amount(draft.outputUsd);
  if (outputUsd === undefined) errors.outputUsd = 'A price in dollars per million tokens, e.g. 10.';
  let cachedInputUsd: number | undefined;
  if (draft.cachedInputUsd.trim() !== '') {
    cachedInputUsd = amount(draft.cachedInputUsd);
    if (cachedInputUsd === undefined) errors.cachedInputUsd = 'A price, or empty to use the input price.';
  }
  if (Object.keys(errors).length > 0 || inputUsd === undefined || outputUsd === undefined) return { errors };
  return { input: { model, inputUsd, outputUsd, ...(cachedInputUsd !== undefined ? { cachedInputUsd } : {}) } };
}
