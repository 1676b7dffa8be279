// Anthropic Messages request → snapshot. The prefix is tools → system →
// messages, with cache_control markers on blocks of any of them, or at the top
// level for automatic caching. Bedrock Converse has the same layout.
import { hashContent } from '../hash.js';
import type { SnapshotContent } from '../types.js';
import { expectArray, modelOf, optionalArray, type JsonObject, type SnapshotOptions } from './common.js';
import { readMessage, readSystem } from './content.js';
import { autoMarkers, cacheControlOf, type Marker } from './markers.js';
import { readTools } from './tools.js';

export interface MarkedPrefix {
  model: string;
  tools: readonly unknown[];
  toolsField: string;
  system: unknown;
  messages: readonly unknown[];
  /** Markers after the messages (automatic caching). */
  trailing: Marker[];
}

/** A prefix whose markers sit on (or between) its blocks. */
export function markedSnapshot(prefix: MarkedPrefix): SnapshotContent {
  const tools = readTools(prefix.tools, prefix.toolsField);
  const system = readSystem(prefix.system, 'system');
  const markers = [...tools.markers, ...system.markers];
  const messageHashes = prefix.messages.map((raw, i) => {
    const read = readMessage(raw, `messages[${i}]`, 'text', 'messages', i);
    markers.push(...read.markers);
    return hashContent(read.message);
  });
  markers.push(...prefix.trailing);
  const sizes = { tools: tools.tools.length, system: system.hashes.systemBlockHashes.length, messages: messageHashes.length };
  return {
    model: prefix.model,
    ...system.hashes,
    tools: tools.tools,
    cacheControl: cacheControlOf(markers, sizes),
    messageHashes,
  };
}

/**
 * Anthropic: changing `thinking` or `tool_choice` invalidates the cached
 * messages (not tools or system). Both are always known from a body: absent
 * is a value too, so a request that turns thinking off is a change.
 */
function requestParams(body: JsonObject): Pick<SnapshotContent, 'thinking' | 'toolChoice' | 'params'> {
  const found: Pick<SnapshotContent, 'thinking' | 'toolChoice' | 'params'> = { params: {} };
  if (body.thinking !== undefined && body.thinking !== null) found.thinking = body.thinking;
  if (body.tool_choice !== undefined && body.tool_choice !== null) found.toolChoice = body.tool_choice;
  return found;
}

export function anthropicSnapshot(body: JsonObject, options: SnapshotOptions): SnapshotContent {
  const snapshot = markedSnapshot({
    model: modelOf(options, body.model, 'model'),
    tools: optionalArray(body.tools, 'tools'),
    toolsField: 'tools',
    system: body.system,
    messages: expectArray(body.messages, 'messages'),
    trailing: autoMarkers(body),
  });
  return { ...snapshot, ...requestParams(body) };
}
