// SPEC §3: every provider's usage becomes one `Usage`. Providers disagree on
// whether their input count includes cached tokens, so the arithmetic belongs
// to the usage shape. The shape is read from the field names, which are
// unambiguous, before the provider label: OpenAI- and Anthropic-compatible
// endpoints (and Claude on Vertex or Bedrock) send another provider's shape.
import type { Usage } from './types.js';

export type UsageResult = { ok: true; usage: Usage } | { ok: false; field: string; error: string };

/** The usage layouts providers send. */
export type UsageShape = 'anthropic' | 'bedrock' | 'chat' | 'responses' | 'gemini' | 'deepseek';

export interface ProviderInfo {
  /** Other names it goes by, including OTel `gen_ai.provider.name` values; matched case-insensitively. */
  readonly aliases: readonly string[];
  /** What its native API returns; decides when the fields alone do not. */
  readonly shape: UsageShape;
}

/** Where each usage layout keeps its counts (SPEC §3), in Markdown: docs/how-it-decides.md's table, checked against the usage fixtures. */
export const USAGE_FIELDS: Readonly<Record<UsageShape, { providers: string; total: string; includesCache: boolean; read: string; write: string | null }>> = {
  anthropic: { providers: 'Anthropic', total: '`input_tokens`', includesCache: false, read: '`cache_read_input_tokens`', write: '`cache_creation_input_tokens` (1h share: `cache_creation.ephemeral_1h_input_tokens`)' },
  bedrock: { providers: 'Bedrock', total: '`inputTokens`', includesCache: false, read: '`cacheReadInputTokens`', write: '`cacheWriteInputTokens` (1h share: `cacheDetails`)' },
  chat: {
    providers: 'OpenAI chat, OpenRouter, xAI, DashScope',
    total: '`prompt_tokens` (LiteLLM: without the cache when below read + write)',
    includesCache: true,
    read: '`prompt_tokens_details.cached_tokens`',
    write: '`prompt_tokens_details.cache_write_tokens`, `.cache_creation_input_tokens` or `.cache_creation_tokens` (LiteLLM), or a top-level `cache_creation_input_tokens` (LiteLLM)',
  },
  responses: { providers: 'OpenAI Responses', total: '`input_tokens`', includesCache: true, read: '`input_tokens_details.cached_tokens`', write: '`input_tokens_details.cache_write_tokens`' },
  gemini: { providers: 'Gemini, Vertex AI', total: '`promptTokenCount`', includesCache: true, read: '`cachedContentTokenCount` (absent: 0, as Gemini omits zero fields)', write: null },
  deepseek: { providers: 'DeepSeek', total: '`prompt_tokens`', includesCache: true, read: '`prompt_cache_hit_tokens`', write: null },
};

/** The supported providers by canonical name. */
export const PROVIDERS = {
  anthropic: { aliases: [], shape: 'anthropic' },
  bedrock: { aliases: ['aws.bedrock', 'amazon-bedrock'], shape: 'bedrock' },
  openai: { aliases: ['azure', 'azure.ai.openai', 'azure-openai', 'azure_openai'], shape: 'chat' },
  openrouter: { aliases: [], shape: 'chat' },
  xai: { aliases: ['x_ai'], shape: 'chat' },
  dashscope: { aliases: ['qwen', 'alibaba'], shape: 'chat' },
  gemini: {
    aliases: ['google', 'vertex', 'google-vertex', 'gcp.gemini', 'gcp.vertex_ai', 'gcp.gen_ai'],
    shape: 'gemini',
  },
  deepseek: { aliases: [], shape: 'deepseek' },
} as const satisfies Record<string, ProviderInfo>;

export type ProviderName = keyof typeof PROVIDERS;

const PROVIDER_BY_NAME = new Map<string, ProviderName>(
  (Object.keys(PROVIDERS) as ProviderName[]).flatMap((name) =>
    [name, ...PROVIDERS[name].aliases].map((alias) => [alias, name] as const),
  ),
);

/** Names as sent → canonical name (null: not one we know); detection asks once per turn. */
const canonicalNames = new Map<string, ProviderName | null>();

/** The canonical name of a provider or alias, or undefined when it is not one we know. */
export function resolveProvider(name: string): ProviderName | undefined {
  let resolved = canonicalNames.get(name);
  if (resolved === undefined) {
    resolved = PROVIDER_BY_NAME.get(name.trim().toLowerCase()) ?? null;
    // Bounded: provider names come from the wire.
    if (canonicalNames.size >= 1024) canonicalNames.clear();
    canonicalNames.set(name, resolved);
  }
  return resolved ?? undefined;
}

/** SPEC §2's already-normalised usage fields, as they appear on a usage event. */
export type ReportedUsage = {
  uncachedInputTokens?: unknown;
  cacheReadInputTokens?: unknown;
  cacheWriteInputTokens?: unknown;
  cacheWrite1hInputTokens?: unknown;
  outputTokens?: unknown;
};

/**
 * Normalises a provider's usage as the API returned it: the bare usage object,
 * the full response (or stream event) carrying it, or an array of stream
 * events. Error fields are paths from the event's `usage` field.
 */
export function normalizeUsage(provider: string, raw: unknown): UsageResult {
  return attempt(() => {
    const { fields, shape } = locate(raw, 'usage');
    const known = resolveProvider(provider);
    const detected = shape ?? detect(fields.base.obj) ?? (known && PROVIDERS[known].shape);
    if (detected === undefined) {
      throw new FieldError(
        fields.base.path,
        'expected a usage object with an input token count (input_tokens, prompt_tokens, promptTokenCount or inputTokens), found none',
      );
    }
    return SHAPES[detected](fields);
  });
}

/** Normalises SPEC §2's already-normalised fields; absent counts are 0. */
export function normalizeReported(reported: ReportedUsage): UsageResult {
  return attempt(() => {
    const fields = new Fields({ obj: reported, path: '' });
    const write = fields.opt('cacheWriteInputTokens');
    const write1h = fields.opt('cacheWrite1hInputTokens') ?? 0;
    // The client computed these itself, so an inconsistency is its bug to fix.
    if (write1h > (write ?? 0)) {
      throw new FieldError(
        'cacheWrite1hInputTokens',
        `expected at most cacheWriteInputTokens (${write ?? 0}), got ${write1h}`,
      );
    }
    return build({
      uncached: fields.opt('uncachedInputTokens') ?? 0,
      read: fields.opt('cacheReadInputTokens'),
      write,
      write1h,
      output: fields.opt('outputTokens'),
      writeReported: write !== undefined,
    });
  });
}

class FieldError extends Error {
  readonly field: string;
  constructor(field: string, message: string) {
    super(message);
    this.field = field;
  }
}

function attempt(compute: () => Usage): UsageResult {
  try {
    return { ok: true, usage: compute() };
  } catch (error) {
    if (error instanceof FieldError) return { ok: false, field: error.field, error: error.message };
    throw error;
  }
}

type Obj = Record<string, unknown>;

/** An object to read counts from; `path` names it in errors. */
interface Source {
  readonly obj: Obj;
  readonly path: string;
}

function isObject(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Null counts as absent: Anthropic sends null for cache fields it has nothing to say about. */
function present(value: unknown): boolean {
  return value !== undefined && value !== null;
}

function join(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

function objectAt(value: unknown, path: string): Obj {
  if (isObject(value)) return value;
  throw new FieldError(path, `expected an object, got ${describe(value)}`);
}

function describe(value: unknown): string {
  if (typeof value === 'string') {
    // Only numbers are echoed: any other string may be content.
    return value.trim() !== '' && Number.isFinite(Number(value)) ? `"${value}"` : 'a non-numeric string';
  }
  if (Array.isArray(value)) return 'an array';
  if (isObject(value)) return 'an object';
  return String(value);
}

function toCount(value: unknown, field: string): number {
  // Some telemetry sends counts as strings.
  const n = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  // `+ 0` turns JSON's -0 into 0.
  if (typeof n === 'number' && Number.isSafeInteger(n) && n >= 0) return n + 0;
  throw new FieldError(field, `expected a non-negative integer, got ${describe(value)}`);
}

/** Reads counts from a usage object, letting `overrides` win where they carry a value. */
class Fields {
  readonly base: Source;
  private readonly sources: readonly Source[];

  constructor(base: Source, overrides: readonly Source[] = []) {
    this.base = base;
    this.sources = [...overrides, base];
  }

  /** The first present value at `keys`, and where it was found. */
  private find(keys: readonly string[]): { value: unknown; field: string } | undefined {
    for (const source of this.sources) {
      let value: unknown = source.obj;
      let field = source.path;
      for (const key of keys) {
        if (!present(value)) break;
        value = objectAt(value, field)[key];
        field = join(field, key);
      }
      if (present(value)) return { value, field };
    }
    return undefined;
  }

  /** Whether any value is present at `keys`. */
  has(...keys: string[]): boolean {
    return this.find(keys) !== undefined;
  }

  opt(...keys: string[]): number | undefined {
    const found = this.find(keys);
    return found && toCount(found.value, found.field);
  }

  req(...keys: string[]): number {
    const count = this.opt(...keys);
    if (count !== undefined) return count;
    const field = join(this.base.path, keys.join('.'));
    throw new FieldError(field, 'required field is missing; expected a non-negative integer');
  }

  /** The objects of the array at `key`; none when it is absent. */
  list(key: string): Source[] {
    const found = this.find([key]);
    if (found === undefined) return [];
    const { value, field } = found;
    if (!Array.isArray(value)) throw new FieldError(field, `expected an array, got ${describe(value)}`);
    return value.map((item: unknown, i) => {
      const path = `${field}[${i}]`;
      return { obj: objectAt(item, path), path };
    });
  }
}

interface Parts {
  uncached: number;
  read?: number;
  write?: number;
  write1h?: number;
  output?: number;
  /** Defaults to whether a read or write count was present (SPEC §3: no cache field means unreported). */
  reported?: boolean;
  /** Defaults to whether a write count was present (SPEC §4.12: explicit caching). */
  writeReported?: boolean;
}

function build(parts: Parts): Usage {
  const write = parts.write ?? 0;
  return {
    uncached: parts.uncached,
    read: parts.read ?? 0,
    write,
    // The 1h share is part of the write; a provider reporting more is clamped to it.
    write1h: Math.min(parts.write1h ?? 0, write),
    output: parts.output ?? 0,
    cacheReported: parts.reported ?? (parts.read !== undefined || parts.write !== undefined),
    writeReported: parts.writeReported ?? parts.write !== undefined,
  };
}

/** What an inclusive input total leaves after the cache read and write. */
function rest(total: number, read = 0, write = 0): number {
  // A total below read + write is a provider or gateway bug; clamping keeps
  // every sum and rate built on `uncached` from going negative.
  return Math.max(0, total - read - write);
}

// `input_tokens` EXCLUDES the cache. Anthropic caches only what is marked, so
// its usage is explicit caching even when the write field is null.
function anthropic(fields: Fields): Usage {
  return build({
    uncached: fields.req('input_tokens'),
    read: fields.opt('cache_read_input_tokens'),
    write: fields.opt('cache_creation_input_tokens'),
    write1h: fields.opt('cache_creation', 'ephemeral_1h_input_tokens'),
    output: fields.opt('output_tokens'),
    writeReported: true,
  });
}

// `inputTokens` EXCLUDES the cache; `cacheDetails` splits the write by TTL.
function bedrock(fields: Fields): Usage {
  let write1h = 0;
  for (const detail of fields.list('cacheDetails')) {
    if (detail.obj['ttl'] === '1h') write1h += new Fields(detail).req('inputTokens');
  }
  return build({
    uncached: fields.req('inputTokens'),
    read: fields.opt('cacheReadInputTokens'),
    write: fields.opt('cacheWriteInputTokens'),
    write1h,
    output: fields.opt('outputTokens'),
    writeReported: true,
  });
}

// OpenAI-style totals INCLUDE the cache. DashScope names the write
// `cache_creation_input_tokens`; its `cache_creation` split is 5m only.
// LiteLLM puts Anthropic's write count at the top level, beside an inclusive
// prompt_tokens: a write field, so explicit caching. A DashScope explicit-cache
// hit names its cache_type and omits the write it did not make.
//
// LiteLLM's Anthropic shapes give Anthropic's `input_tokens` as prompt_tokens,
// without the cache (the write at the top level, or as
// `prompt_tokens_details.cache_creation_tokens`): with those fields, a total
// below what was read and written cannot include them, and is the uncached
// part. Elsewhere such a total is a bug, clamped.
function inclusive(fields: Fields, total: string, details: string, output: string): Usage {
  const read = fields.opt(details, 'cached_tokens') ?? fields.opt('cache_read_input_tokens');
  const liteLlmWrite = fields.opt(details, 'cache_creation_tokens') ?? fields.opt('cache_creation_input_tokens');
  const write = fields.opt(details, 'cache_write_tokens') ?? fields.opt(details, 'cache_creation_input_tokens') ?? liteLlmWrite;
  const count = fields.req(total);
  const withoutCache = (liteLlmWrite !== undefined || fields.has('cache_read_input_tokens')) && count < (read ?? 0) + (write ?? 0);
  return build({
    uncached: withoutCache ? count : rest(count, read, write),
    read,
    write,
    output: fields.opt(output),
    writeReported: write !== undefined || fields.has(details, 'cache_type'),
  });
}

function chat(fields: Fields): Usage {
  return inclusive(fields, 'prompt_tokens', 'prompt_tokens_details', 'completion_tokens');
}

function responses(fields: Fields): Usage {
  return inclusive(fields, 'input_tokens', 'input_tokens_details', 'output_tokens');
}

// `promptTokenCount` INCLUDES the cache; there is no write count.
function gemini(fields: Fields): Usage {
  // Gemini serialises proto3 JSON, which omits zero fields: an absent
  // cachedContentTokenCount means 0 read, not "unreported". Otherwise every
  // Gemini miss would be invisible.
  const read = fields.opt('cachedContentTokenCount') ?? 0;
  return build({
    uncached: rest(fields.req('promptTokenCount'), read),
    read,
    // Thinking is billed as output but not counted in candidatesTokenCount.
    output: (fields.opt('candidatesTokenCount') ?? 0) + (fields.opt('thoughtsTokenCount') ?? 0),
    reported: true,
  });
}

// prompt_tokens = hit + miss; there is no write count.
function deepseek(fields: Fields): Usage {
  const read = fields.opt('prompt_cache_hit_tokens');
  const output = fields.opt('completion_tokens');
  if (read === undefined) return build({ uncached: fields.req('prompt_tokens'), output });
  const uncached = fields.opt('prompt_cache_miss_tokens') ?? rest(fields.req('prompt_tokens'), read);
  return build({ uncached, read, output });
}

const SHAPES: Record<UsageShape, (fields: Fields) => Usage> = {
  anthropic,
  bedrock,
  chat,
  responses,
  gemini,
  deepseek,
};

// Field names only one shape uses, most specific first: DeepSeek also sends
// prompt_tokens, and a bare input_tokens is Anthropic or Responses, which
// agree when no cache field is present.
const MARKERS: readonly (readonly [UsageShape, readonly string[]])[] = [
  ['deepseek', ['prompt_cache_hit_tokens', 'prompt_cache_miss_tokens']],
  ['chat', ['prompt_tokens', 'prompt_tokens_details']],
  ['responses', ['input_tokens_details']],
  ['gemini', ['promptTokenCount', 'cachedContentTokenCount', 'candidatesTokenCount']],
  ['bedrock', ['inputTokens', 'cacheReadInputTokens', 'cacheWriteInputTokens']],
  ['anthropic', ['input_tokens', 'cache_read_input_tokens', 'cache_creation_input_tokens']],
];

function detect(usage: Obj): UsageShape | undefined {
  return MARKERS.find(([, keys]) => keys.some((key) => present(usage[key])))?.[0];
}

// Keys that lead from a response or stream event to its usage: Gemini's
// usageMetadata, a Responses `response.*` event, an Anthropic `message_start`,
// a Bedrock ConverseStream `metadata` event.
const WRAPPERS = ['usageMetadata', 'usage', 'response', 'message', 'metadata'] as const;

function unwrap(value: unknown, path: string): { value: unknown; path: string } {
  while (isObject(value)) {
    const obj = value;
    const key = WRAPPERS.find((k) => obj[k] !== undefined);
    if (key === undefined) break;
    value = obj[key];
    path = join(path, key);
  }
  return { value, path };
}

interface Located {
  fields: Fields;
  /** Set when the container already tells the shape. */
  shape?: UsageShape;
}

function locate(raw: unknown, path: string): Located {
  if (Array.isArray(raw)) return fromStream(raw, path);
  const found = unwrap(raw, path);
  return { fields: new Fields({ obj: objectAt(found.value, found.path), path: found.path }) };
}

/**
 * An Anthropic stream: `message_delta` counts are cumulative, so the final
 * delta wins and `message_start` fills what it leaves null. Any other stream
 * (OpenAI or Gemini chunks, Responses or ConverseStream events): the last
 * usage sent.
 */
function fromStream(events: readonly unknown[], path: string): Located {
  let start: Source | undefined;
  let delta: Source | undefined;
  let last: Source | undefined;
  for (const [i, event] of events.entries()) {
    const found = unwrap(event, `${path}[${i}]`);
    if (!isObject(found.value)) continue;
    const source = { obj: found.value, path: found.path };
    const type = isObject(event) ? event['type'] : undefined;
    if (type === 'message_start') start = source;
    else if (type === 'message_delta') delta = source;
    else if (detect(found.value) !== undefined) last = source;
  }
  if (start !== undefined) return { fields: new Fields(start, delta ? [delta] : []), shape: 'anthropic' };
  if (delta !== undefined) return { fields: new Fields(delta), shape: 'anthropic' };
  if (last !== undefined) return { fields: new Fields(last) };
  throw new FieldError(path, 'expected a stream with at least one event carrying usage, found none');
}
