// System prompts and messages → hashes. A plain string is read as one text
// block: adding a marker needs the block form, and that switch alone must not
// look like a changed prompt.
import { hashContent } from '../hash.js';
import { expectArray, expectRecord, isRecord, SnapshotError, type JsonObject } from './common.js';
import { markerNames, splitBlocks, type Marker, type Section } from './markers.js';

export interface SystemHashes {
  systemHash: string;
  systemBlockHashes?: string[];
}

export function textBlock(text: string, type = 'text'): JsonObject {
  return { type, text };
}

export function hashBlocks(blocks: readonly unknown[]): Required<SystemHashes> {
  return { systemHash: hashContent(blocks), systemBlockHashes: blocks.map((block) => hashContent(block)) };
}

/** The blocks of a raw system prompt and the field they sit at; undefined for a shape without blocks. */
function systemBlocks(raw: unknown, field: string): { blocks: readonly unknown[]; field: string } | undefined {
  if (raw === undefined || raw === null) return { blocks: [], field };
  if (typeof raw === 'string') return { blocks: [textBlock(raw)], field };
  if (Array.isArray(raw)) return { blocks: raw, field };
  // Gemini: a Content whose parts are the blocks.
  if (isRecord(raw) && Array.isArray(raw.parts)) return { blocks: raw.parts, field: `${field}.parts` };
  return undefined;
}

export function readSystem(raw: unknown, field: string): { hashes: Required<SystemHashes>; markers: Marker[] } {
  const found = systemBlocks(raw, field);
  if (!found) throw new SnapshotError(field, 'expected a string or an array of blocks');
  const { kept, markers } = splitBlocks(found.blocks, found.field, 'system');
  return { hashes: hashBlocks(kept), markers };
}

/**
 * Hashes a raw system prompt (a string is one block; an array, or a Gemini
 * Content's parts, a hash per block), and names the cache markers on its
 * blocks ("system:1@1h"), which are left out of the hashes. Any other shape
 * gets a whole-value hash only. Throws SnapshotError on a malformed marker.
 */
export function readRawSystem(raw: unknown): SystemHashes & { markers: string[] } {
  if (!systemBlocks(raw, 'system')) return { systemHash: hashContent(raw), markers: [] };
  const { hashes, markers } = readSystem(raw, 'system');
  return { ...hashes, markers: markerNames(markers, { tools: 0, system: hashes.systemBlockHashes.length, messages: 0 }) };
}

/**
 * A message with the markers taken out of its content, ready to hash, and
 * how many content blocks it holds (a string is one; a marker block is none).
 */
export function readMessage(
  raw: unknown,
  field: string,
  textType: string,
  section: Section,
  at: number,
): { message: JsonObject; markers: Marker[]; blocks: number } {
  const message = expectRecord(raw, field);
  const content = message.content;
  if (content === undefined || content === null) return { message, markers: [], blocks: 0 };
  const blocks = typeof content === 'string' ? [textBlock(content, textType)] : content;
  if (!Array.isArray(blocks)) throw new SnapshotError(`${field}.content`, 'expected a string or an array');
  const { kept, markers } = splitBlocks(blocks, `${field}.content`, section, at);
  return { message: { ...message, content: kept }, markers, blocks: kept.length };
}

/** Messages that carry no cache markers (Gemini `contents`) → one hash per message, in order. */
export function hashMessages(raw: unknown, field: string): string[] {
  return expectArray(raw, field).map((message, i) => hashContent(expectRecord(message, `${field}[${i}]`)));
}
