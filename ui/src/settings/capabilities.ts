import type { ModelCapabilities, Provider } from '../protocol.gen';

export type Capability = 'tools' | 'reasoning' | 'vision';

export const CAPABILITIES: readonly { key: Capability; label: string; help: string }[] = [
  { key: 'tools', label: 'Tools', help: 'Native tool calling; without it tools are described in the prompt.' },
  { key: 'reasoning', label: 'Reasoning', help: 'Switch on thinking / reasoning effort for this model.' },
  { key: 'vision', label: 'Vision', help: 'Send images to this model (otherwise it is told an image was attached).' },
];

/** One model's row in the capabilities editor. */
export interface CapabilityRow {
  model: string;
  tools: boolean;
  reasoning: boolean;
  vision: boolean;
  /**
   * `set`: the user chose these; `guessed`: the backend guessed from the name; `new`: a
   * model not saved yet (the backend guesses when it is saved, unless set here).
   */
  source: 'set' | 'guessed' | 'new';
}

/** Capabilities changed in the form, by model; only these are sent. */
export type CapabilityEdits = Readonly<Record<string, ModelCapabilities>>;

/** The rows for the models the provider will have: edits first, then what the backend says. */
export function capabilityRows(models: readonly string[], known: Provider['capabilities'] | undefined, edits: CapabilityEdits): CapabilityRow[] {
  return models.map((model) => {
    const edited = edits[model];
    if (edited) return { model, tools: edited.tools, reasoning: edited.reasoning, vision: edited.vision, source: 'set' };
    const saved = known?.[model];
    if (saved) return { model, tools: saved.tools, reasoning: saved.reasoning, vision: saved.vision, source: saved.custom ? 'set' : 'guessed' };
    return { model, tools: true, reasoning: false, vision: false, source: 'new' };
  });
}

/** The edits after the user flips one box: the whole row becomes the user's choice. */
export function toggleCapability(edits: CapabilityEdits, row: CapabilityRow, capability: Capability): CapabilityEdits {
  const next: ModelCapabilities = { tools: row.tools, reasoning: row.reasoning, vision: row.vision, custom: true };
  next[capability] = !row[capability];
  return { ...edits, [row.model]: next };
}

/** What `provider_create`/`provider_update` get as `capabilities`: the edits of models still listed. */
export function capabilitiesToSend(edits: CapabilityEdits, models: readonly string[]): Record<string, ModelCapabilities> | undefined {
  const entries = Object.entries(edits).filter(([model]) => models.includes(model));
  return entries.length > 0 ? Object.fromEntries(entries) : undefined;
}
