// Anthropic Messages request → snapshot. The prefix is tools → system →
// messages, with cache_control markers on blocks of any of them, or at the top
// level for automatic caching. Bedrock Converse has the same layout.
import { hashContent } from '../hash.js';
import type { CutPlace, SnapshotContent } from '../types.js';
import { expectArray, isRecord, modelOf, optionalArray, prefixChars, type JsonObject, type SnapshotOptions } from './common.js';
import { readMessage, readSystem } from './content.js';
import type { CutObject } from './cut.js';
import { autoMarkers, cacheControlOf, type Marker } from './markers.js';
import { messagesAsSeen } from './thinking.js';
import { readTools } from './tools.js';

export interface MarkedPrefix {
  model: string;
  tools: readonly unknown[];
  toolsField: string;
  system: unknown;
  /** As sent: the thinking the API strips is taken out here (thinking.ts). */
  messages: readonly unknown[];
  /** The request's `context_management`, which may say which thinking the API strips. */
  contextManagement?: unknown;
  /** Markers after the messages (automatic caching). */
  trailing: Marker[];
}

/** Hashes, content blocks (what a lookup walks back over) and markers of the messages. */
function readMessages(messages: readonly unknown[]): { hashes: string[]; blocks: number[]; markers: Marker[] } {
  const markers: Marker[] = [];
  const blocks: number[] = [];
  const hashes = messages.map((raw, i) => {
    const read = readMessage(raw, `messages[${i}]`, 'text', 'messages', i);
    markers.push(...read.markers);
    blocks.push(read.blocks);
    return hashContent(read.message);
  });
  return { hashes, blocks, markers };
}

/** A prefix whose markers sit on (or between) its blocks. */
export function markedSnapshot(prefix: MarkedPrefix): SnapshotContent {
  const tools = readTools(prefix.tools, prefix.toolsField);
  const system = readSystem(prefix.system, 'system');
  const messages = messagesAsSeen(prefix.model, prefix.messages, prefix.contextManagement);
  const { hashes: messageHashes, blocks: messageBlockCounts, markers: messageMarkers } = readMessages(messages);
  const markers = [...tools.markers, ...system.markers, ...messageMarkers, ...prefix.trailing];
  const sizes = { tools: tools.tools.length, system: system.hashes.systemBlockHashes.length, messages: messageHashes.length };
  return {
    model: prefix.model,
    ...system.hashes,
    tools: tools.tools,
    cacheControl: cacheControlOf(markers, sizes),
    messageHashes,
    messageBlockCounts,
    prefixChars: prefixChars([prefix.tools, prefix.system], messages),
  };
}

/**
 * Request fields besides `thinking` and `tool_choice` that change what the
 * API caches or serves from it: the effort (`output_config`), context editing
 * that clears old tool results server-side (`context_management`), remote
 * MCP toolsets (`mcp_servers`) and the speed setting.
 */
const CACHE_KEY_FIELDS = ['output_config', 'context_management', 'mcp_servers', 'speed'] as const;

/**
 * Whether a block of the system prompt or the messages turns citations on
 * (`citations: {enabled: true}`, on a document or search result): toggling
 * them changes the system prompt the API builds, so the cached system and
 * messages go, whichever block carries the toggle.
 */
function citationsOn(body: JsonObject): boolean {
  const blocks = [...(Array.isArray(body.system) ? body.system : []), ...(Array.isArray(body.messages) ? body.messages : []).flatMap((message) => (isRecord(message) && Array.isArray(message.content) ? message.content : []))];
  return blocks.some((block) => isRecord(block) && isRecord(block.citations) && block.citations.enabled === true);
}

/**
 * Anthropic: changing `thinking`, `tool_choice`, a CACHE_KEY_FIELDS field or
 * whether citations are on invalidates the cached messages at least. All are
 * always known from a body: absent is a value too, so a request that turns
 * thinking off is a change.
 */
function requestParams(body: JsonObject): Pick<SnapshotContent, 'thinking' | 'toolChoice' | 'params'> {
  const found: Pick<SnapshotContent, 'thinking' | 'toolChoice' | 'params'> = { params: {} };
  if (body.thinking !== undefined && body.thinking !== null) found.thinking = body.thinking;
  if (body.tool_choice !== undefined && body.tool_choice !== null) found.toolChoice = body.tool_choice;
  for (const field of CACHE_KEY_FIELDS) {
    if (body[field] !== undefined && body[field] !== null) found.params![field] = body[field];
  }
  if (citationsOn(body)) found.params!.citations = true;
  return found;
}

export function anthropicSnapshot(body: JsonObject, options: SnapshotOptions): SnapshotContent {
  const snapshot = markedSnapshot({
    model: modelOf(options, body.model, 'model'),
    tools: optionalArray(body.tools, 'tools'),
    toolsField: 'tools',
    system: body.system,
    messages: expectArray(body.messages, 'messages'),
    contextManagement: body.context_management,
    trailing: autoMarkers(body),
  });
  return { ...snapshot, ...requestParams(body) };
}

/**
 * An Anthropic request whose body was cut (see cut.ts): model, system, tools
 * and messages as far as they are whole, the tools or messages the cut fell
 * in up to their last complete entry (and, for a model that strips earlier
 * thinking, the messages up to one whose thinking a turn past the cut may
 * strip: thinking.ts). Markers and request parameters are
 * left out: the ones past the cut are unknown, and a partial list of them
 * would read as markers removed and parameters changed.
 */
export function anthropicCutSnapshot(body: CutObject, options: SnapshotOptions): SnapshotContent {
  const { members, cut } = body;
  const place: CutPlace = cut?.key === 'tools' || cut?.key === 'messages' ? cut.key : 'elsewhere';
  const snapshot: SnapshotContent = { model: modelOf(options, members.model, 'model'), partial: place };
  const listed = (key: 'tools' | 'messages'): readonly unknown[] | undefined =>
    Object.hasOwn(members, key) ? optionalArray(members[key], key) : place === key ? (cut?.elements ?? []) : undefined;
  const tools = listed('tools');
  if (tools) snapshot.tools = readTools(tools, 'tools').tools;
  if (Object.hasOwn(members, 'system')) Object.assign(snapshot, readSystem(members.system, 'system').hashes);
  const messages = listed('messages');
  if (messages) {
    const read = readMessages(messagesAsSeen(snapshot.model, messages, members.context_management, place !== 'messages'));
    snapshot.messageHashes = read.hashes;
    snapshot.messageBlockCounts = read.blocks;
  }
  return snapshot;
}
