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
  return {
    model: prefix.model,
    ...system.hashes,
    tools: tools.tools,
    cacheControl: cacheControlOf(markers, { tools: tools.tools.length, messages: messageHashes.length }),
    messageHashes,
  };
}

export function anthropicSnapshot(body: JsonObject, options: SnapshotOptions): SnapshotContent {
  return markedSnapshot({
    model: modelOf(options, body.model, 'model'),
    tools: optionalArray(body.tools, 'tools'),
    toolsField: 'tools',
    system: body.system,
    messages: expectArray(body.messages, 'messages'),
    trailing: autoMarkers(body),
  });
}
