// Cache markers: Anthropic `cache_control` and OpenAI `prompt_cache_breakpoint`
// on a block, or a Bedrock `cachePoint` block after the block it ends. They
// are taken out of the content before hashing (so moving one changes only
// `cacheControl`) and named by where they sit in the prefix.
import { hashValue } from '../hash.js';
import type { CacheControl } from '../types.js';
import { expectRecord, expectString, isRecord, type JsonObject } from './common.js';

/** Anthropic and Bedrock markers without a ttl last 5 minutes. */
const DEFAULT_TTL = '5m';

/** Keys that say what kind of marker it is, the same for every marker of an API. */
const KIND_KEYS = new Set(['type', 'mode', 'ttl']);

export type Section = 'tools' | 'system' | 'messages' | 'auto';

export interface MarkSettings {
  ttl?: string;
  /** Any other setting (e.g. a cache scope), as ",key=value", so changing it changes the marker. */
  extras: string;
}

export interface Marker extends MarkSettings {
  section: Section;
  /** Index within the section of the tool, system block or message the marker ends. */
  at: number;
}

/** What the prefix up to the last marker covers. */
const SCOPES: Record<Section, string> = {
  tools: 'tools',
  system: 'tools+system',
  messages: 'tools+system+messages',
  auto: 'tools+system+messages',
};

function show(value: unknown): string {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
    ? String(value)
    : hashValue(value);
}

export function parseMark(value: unknown, field: string, defaultTtl?: string): MarkSettings {
  const settings = expectRecord(value, field);
  const ttl = settings.ttl === undefined ? defaultTtl : expectString(settings.ttl, `${field}.ttl`);
  const extras = Object.keys(settings)
    .filter((key) => !KIND_KEYS.has(key))
    .sort()
    .map((key) => `,${key}=${show(settings[key])}`)
    .join('');
  return ttl === undefined ? { extras } : { ttl, extras };
}

/** A block split into its content (absent for a bare cachePoint) and its marker. */
export function readBlock(block: unknown, field: string): { content?: unknown; mark?: MarkSettings } {
  if (!isRecord(block)) return { content: block };
  if (block.cachePoint !== undefined) return { mark: parseMark(block.cachePoint, `${field}.cachePoint`, DEFAULT_TTL) };
  const { cache_control: control, prompt_cache_breakpoint: breakpoint, ...content } = block;
  if (control !== undefined && control !== null) {
    return { content, mark: parseMark(control, `${field}.cache_control`, DEFAULT_TTL) };
  }
  if (breakpoint !== undefined && breakpoint !== null) {
    return { content, mark: parseMark(breakpoint, `${field}.prompt_cache_breakpoint`) };
  }
  return { content };
}

/**
 * The blocks without markers, and the markers. A marker ends at the block it
 * sits on (or, for a cachePoint, the block before it), unless `at` pins it to
 * a whole message.
 */
export function splitBlocks(
  blocks: readonly unknown[],
  field: string,
  section: Section,
  at?: number,
): { kept: unknown[]; markers: Marker[] } {
  const kept: unknown[] = [];
  const markers: Marker[] = [];
  blocks.forEach((block, i) => {
    const read = readBlock(block, `${field}[${i}]`);
    if ('content' in read) kept.push(read.content);
    if (read.mark) markers.push({ section, at: at ?? kept.length - 1, ...read.mark });
  });
  return { kept, markers };
}

/** Top-level `cache_control` (automatic caching): a marker on the last cacheable block. */
export function autoMarkers(body: JsonObject): Marker[] {
  const control = body.cache_control;
  if (control === undefined || control === null) return [];
  return [{ section: 'auto', at: 0, ...parseMark(control, 'cache_control', DEFAULT_TTL) }];
}

/** SPEC §4.6: absolute positions, counted from the first tool, system block or message. */
function position(marker: Marker, sizes: PrefixSizes): string {
  switch (marker.section) {
    case 'tools':
      return marker.at === sizes.tools - 1 ? 'tools' : `tools:${marker.at}`;
    case 'system':
      return `system:${marker.at}`;
    case 'messages':
      return `messages:${marker.at}`;
    case 'auto':
      // Automatic caching marks the last cacheable block.
      if (sizes.messages > 0) return `messages:${sizes.messages - 1}`;
      return sizes.system > 0 ? `system:${sizes.system - 1}` : 'tools';
  }
}

export interface PrefixSizes {
  tools: number;
  system: number;
  messages: number;
}

/** The markers as SPEC §4.6 names them: "tools@1h", "system:1@5m,scope=global", "messages:7@5m". */
export function markerNames(markers: readonly Marker[], sizes: PrefixSizes): string[] {
  return markers.map((m) => `${position(m, sizes)}${m.ttl === undefined ? '' : `@${m.ttl}`}${m.extras}`);
}

/** Markers must be in prefix order: the last one covers the longest prefix and gives ttl and scope. */
export function cacheControlOf(markers: readonly Marker[], sizes: PrefixSizes): CacheControl {
  const last = markers.at(-1);
  if (!last) return { enabled: false };
  const control: CacheControl = {
    enabled: true,
    scope: SCOPES[last.section],
    markers: markerNames(markers, sizes),
  };
  if (last.ttl !== undefined) control.ttl = last.ttl;
  return control;
}
