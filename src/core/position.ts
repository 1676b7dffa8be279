// SPEC §4.4 and §4.6: where a change or a marker sits in the cached prefix,
// in the order the provider reads it: start < tools < system:0 < system:1 <
// … < messages:0 < messages:1 < …  A position is one number, so that
// comparing two is comparing numbers.
import { hashString } from './hash.js';

const SECTION = 2 ** 32;

export const START = 0;
/** Every tools change and every tools marker share this one position (SPEC §4.12). */
export const TOOLS = 1;
export const systemAt = (k: number) => 2 * SECTION + k;
export const messageAt = (i: number) => 3 * SECTION + i;
export const isMessagePosition = (position: number) => position >= 3 * SECTION;
export const messageIndexOf = (position: number) => position - 3 * SECTION;

/** A marker split into where it sits and what it says (TTL and any other setting). */
export interface Marker {
  /** "tools", "tools:3", "system:1", "messages:7". */
  location: string;
  /** null: a location this version cannot place; a difference there counts as inside the prefix. */
  position: number | null;
  /** "5m", "1h,scope=global"… */
  settings: string;
}

const LOCATION = /^(tools|system|messages)(?::(-?\d+))?$/;
const DURATION = /^\d+(?:\.\d+)?(?:ms|s|m|h|d)$/;

function positionOf(location: string): number | null {
  const match = LOCATION.exec(location);
  if (!match) return null;
  const index = match[2] === undefined ? undefined : Number(match[2]);
  switch (match[1]) {
    case 'tools':
      return TOOLS;
    case 'system':
      return index === undefined || index < 0 ? null : systemAt(index);
    default:
      return index === undefined || index < 0 ? null : messageAt(index);
  }
}

/** "messages:7@5m,scope=x" → location "messages:7", settings "5m,scope=x". */
export function readMarker(name: string): Marker {
  const cut = name.search(/[@,]/);
  const location = cut < 0 ? name : name.slice(0, cut);
  const settings = cut < 0 ? '' : name[cut] === '@' ? name.slice(cut + 1) : name.slice(cut);
  return { location, position: positionOf(location), settings };
}

/** The TTL a marker declares: the settings up to the first extra. */
export function markerTtl(marker: Marker): string {
  const comma = marker.settings.indexOf(',');
  return comma < 0 ? marker.settings : marker.settings.slice(0, comma);
}

/** How many system blocks and messages a snapshot has, when it says. */
export interface Counts {
  system?: number | undefined;
  messages?: number | undefined;
}

/**
 * A client's marker name made absolute and complete (SPEC §4.6): a negative
 * index counts from the end, and a bare `system` or `messages` names the last
 * block, when the snapshot's count is known; a marker without a TTL takes
 * `defaultTtl`.
 */
export function normalizeMarker(name: string, defaultTtl: string, counts: Counts): string {
  const marker = readMarker(name.trim());
  let location = marker.location;
  const relative = /^(system|messages)(?::(-\d+))?$/.exec(location);
  const count = relative ? counts[relative[1] as 'system' | 'messages'] : undefined;
  if (relative && count !== undefined) location = `${relative[1]}:${count + Number(relative[2] ?? -1)}`;
  // Only equality matters beyond the location and TTL: anything else is kept as a hash, never as sent.
  if (positionOf(location) === null) location = `other:${hashString(location)}`;
  const comma = marker.settings.indexOf(',');
  let ttl = comma < 0 ? marker.settings : marker.settings.slice(0, comma);
  if (ttl === '') ttl = defaultTtl;
  else if (!DURATION.test(ttl)) ttl = hashString(ttl);
  return `${location}@${ttl}${comma < 0 ? '' : `,${hashString(marker.settings.slice(comma))}`}`;
}
