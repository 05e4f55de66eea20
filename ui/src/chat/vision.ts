import type { ModelRef, Provider } from '../protocol.gen';

/**
 * The models among `models` that cannot see images: their provider lists them with
 * `vision: false` (what the user set, else the backend's guess from the name). A model
 * the provider does not list is not counted: the backend decides for it.
 */
export function modelsWithoutVision(models: readonly ModelRef[], providers: readonly Provider[]): ModelRef[] {
  return models.filter((model) => {
    const provider = providers.find((candidate) => candidate.id === model.providerId);
    return provider?.capabilities[model.model]?.vision === false;
  });
}

/** "a", "a and b", "a, b and c". */
function listOf(names: readonly string[]): string {
  if (names.length <= 1) return names.join('');
  return `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`;
}

/**
 * What the composer says when images would go to models that cannot see them, or
 * undefined when none would. The backend sends such a model a line of text in place of
 * each image (`agent::prompt`, `user_part`); the image stays with the message, and a
 * model that can see images gets it.
 */
export function visionWarning(models: readonly ModelRef[], providers: readonly Provider[], imageNames: readonly string[]): string | undefined {
  const first = imageNames[0];
  if (first === undefined) return undefined;
  const blind = modelsWithoutVision(models, providers);
  if (blind.length === 0) return undefined;
  const names = listOf(blind.map((model) => model.model));
  const one = blind.length === 1;
  const images = imageNames.length === 1 ? first : `each of the ${imageNames.length} images`;
  const note = `[${first} was attached, but this model cannot see images]`;
  const seeing = models.filter((model) => !blind.includes(model)).map((model) => model.model);
  return [
    `${names} cannot see images: instead of ${images}, ${one ? 'it is' : 'they are'} sent only a note such as “${note}”.`,
    seeing.length > 0 ? `${listOf(seeing)} ${seeing.length === 1 ? 'gets' : 'get'} the image${imageNames.length === 1 ? '' : 's'}.` : '',
    `The image${imageNames.length === 1 ? ' stays' : 's stay'} with your message. Pick a model that can see images, or switch on Vision for ${
      one ? 'it' : 'them'
    } in Settings → Providers if ${one ? 'it can' : 'they can'}.`,
  ]
    .filter(Boolean)
    .join(' ');
}
