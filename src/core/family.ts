// SPEC §4.2: model ids compare by family. Providers and gateways decorate the
// same model (a region or vendor prefix, a date or version suffix); those
// decorations do not change what the cache holds, a different model does.

const REGION = /^(?:us|eu|apac|global|us-gov|ca|jp|au)\./;
const VENDOR = /^(?:anthropic|amazon|meta|mistral|deepseek|qwen|openai|google|cohere|ai21|writer)\./;
// -20250929, @20250929, -2024-08-06 (OpenAI), -v1:0 (Bedrock), -latest: in any order at the end.
const SUFFIX = /(?:[-@]\d{8}|-\d{4}-\d{2}-\d{2}|-v\d+:\d+|-latest)$/;

const cache = new Map<string, string>();

let lastModel: string | undefined;
let lastFamily = '';

/** The family a model id belongs to: `claude-sonnet-4-5-20250929` → `claude-sonnet-4-5`. */
export function modelFamily(model: string): string {
  // A stream asks for one model many times in a row.
  if (model === lastModel) return lastFamily;
  let family = cache.get(model);
  if (family === undefined) family = familyOf(model);
  lastModel = model;
  lastFamily = family;
  return family;
}

function familyOf(model: string): string {
  // `models/…`, `publishers/google/models/…` and gateway ids such as `anthropic/claude-…` name the model last.
  const lower = model.trim().toLowerCase();
  let family = lower.slice(lower.lastIndexOf('/') + 1).replace(REGION, '').replace(VENDOR, '');
  for (let stripped = family.replace(SUFFIX, ''); stripped !== family; stripped = family.replace(SUFFIX, '')) {
    family = stripped;
  }
  // Bounded: model ids are few, but they come from the wire.
  if (cache.size >= 4096) cache.clear();
  cache.set(model, family);
  return family;
}

/** Two turns are of one family; a turn whose model is unknown matches any (SPEC §4.12). */
export function sameFamily(a: string | undefined, b: string | undefined): boolean {
  return a === undefined || b === undefined || modelFamily(a) === modelFamily(b);
}
