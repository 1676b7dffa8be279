// OpenAI Chat Completions and Responses requests → snapshot. Caching is
// automatic: a leading run of system/developer messages is the system prompt,
// prompt_cache_key routes the request, and per-part prompt_cache_breakpoint
// adds explicit markers.
import { hashContent, hashString } from '../hash.js';
import type { CacheControl, SnapshotContent, ToolRef } from '../types.js';
import {
  expectArray,
  expectRecord,
  expectString,
  modelOf,
  optionalArray,
  prefixChars,
  type JsonObject,
  type SnapshotOptions,
} from './common.js';
import { hashBlocks, readMessage, textBlock } from './content.js';
import { autoMarkers, cacheControlOf, type Marker, type PrefixSizes } from './markers.js';
import { readTools } from './tools.js';

const SYSTEM_ROLES = new Set<unknown>(['system', 'developer']);

/** prompt_cache_retention values as durations; others are kept as sent. */
const RETENTION_TTL: Record<string, string> = { in_memory: '5m', '24h': '24h' };

function cacheSettings(body: JsonObject, markers: readonly Marker[], sizes: PrefixSizes): CacheControl {
  const options =
    body.prompt_cache_options === undefined || body.prompt_cache_options === null
      ? {}
      : expectRecord(body.prompt_cache_options, 'prompt_cache_options');
  const fromMarkers = cacheControlOf(markers, sizes);
  // In explicit mode only the breakpoints are cached (none: nothing is);
  // otherwise the provider adds its own breakpoint at the end.
  const control: CacheControl = options.mode === 'explicit' ? fromMarkers : { ...fromMarkers, enabled: true, scope: 'auto' };
  if (options.ttl !== undefined) {
    control.ttl = expectString(options.ttl, 'prompt_cache_options.ttl');
  } else if (body.prompt_cache_retention !== undefined && body.prompt_cache_retention !== null) {
    const retention = expectString(body.prompt_cache_retention, 'prompt_cache_retention');
    control.ttl = Object.hasOwn(RETENTION_TTL, retention) ? RETENTION_TTL[retention] : retention;
  }
  if (body.prompt_cache_key !== undefined && body.prompt_cache_key !== null) {
    control.key = hashString(expectString(body.prompt_cache_key, 'prompt_cache_key'));
  }
  return control;
}

interface Conversation {
  model: string;
  tools: { tools: ToolRef[]; markers: Marker[] };
  /** System blocks that precede the items (Responses `instructions`). */
  system: unknown[];
  items: readonly unknown[];
  /** Whether leading system/developer items are the system prompt (not when they follow a stored conversation). */
  leadingSystem: boolean;
  field: string;
  textType: (role: unknown) => string;
}

function conversationSnapshot(body: JsonObject, c: Conversation): SnapshotContent {
  const system = [...c.system];
  const messages: JsonObject[] = [];
  const blocks: number[] = [];
  // The items as sent, for the size estimate: system ones after the tools and instructions.
  const sent: { system: unknown[]; messages: unknown[] } = { system: [body.tools, body.instructions], messages: [] };
  const markers = [...c.tools.markers];
  for (const [i, raw] of c.items.entries()) {
    const field = `${c.field}[${i}]`;
    const item = expectRecord(raw, field);
    const inSystem = c.leadingSystem && messages.length === 0 && SYSTEM_ROLES.has(item.role);
    const target = inSystem ? system : messages;
    const read = readMessage(raw, field, c.textType(item.role), inSystem ? 'system' : 'messages', target.length);
    target.push(read.message);
    (inSystem ? sent.system : sent.messages).push(raw);
    markers.push(...read.markers);
    // A chat message's tool calls are blocks too; an item without content (a Responses function call) is one.
    if (!inSystem) blocks.push(Math.max(1, read.blocks + (Array.isArray(item.tool_calls) ? item.tool_calls.length : 0)));
  }
  markers.push(...autoMarkers(body));
  return {
    model: c.model,
    ...hashBlocks(system),
    tools: c.tools.tools,
    cacheControl: cacheSettings(body, markers, { tools: c.tools.tools.length, system: system.length, messages: messages.length }),
    messageHashes: messages.map((message) => hashContent(message)),
    messageBlockCounts: blocks,
    prefixChars: prefixChars(sent.system, sent.messages),
  };
}

export function openaiChatSnapshot(body: JsonObject, options: SnapshotOptions): SnapshotContent {
  return conversationSnapshot(body, {
    model: modelOf(options, body.model, 'model'),
    tools: readTools(optionalArray(body.tools, 'tools'), 'tools'),
    system: [],
    items: expectArray(body.messages, 'messages'),
    leadingSystem: true,
    field: 'messages',
    textType: () => 'text',
  });
}

/**
 * Whether the request goes on from a conversation OpenAI stores: a previous
 * response (`previous_response_id`) or a conversation object
 * (`conversation`, an id or `{id}`). Its input is then only what is new.
 */
function continuesStored(body: JsonObject): boolean {
  const present = (value: unknown) => value !== undefined && value !== null;
  if (present(body.previous_response_id)) expectString(body.previous_response_id, 'previous_response_id');
  const conversation = body.conversation;
  if (present(conversation) && typeof conversation !== 'string') expectString(expectRecord(conversation, 'conversation').id, 'conversation.id');
  return present(body.previous_response_id) || present(conversation);
}

export function openaiResponsesSnapshot(body: JsonObject, options: SnapshotOptions): SnapshotContent {
  const instructions = body.instructions;
  const input = body.input;
  const continues = continuesStored(body);
  const snapshot = conversationSnapshot(body, {
    model: modelOf(options, body.model, 'model'),
    tools: readTools(optionalArray(body.tools, 'tools'), 'tools'),
    system: instructions === undefined || instructions === null ? [] : [textBlock(expectString(instructions, 'instructions'))],
    // A string input is one user message.
    items: typeof input === 'string' ? [{ role: 'user', content: input }] : optionalArray(input, 'input'),
    leadingSystem: !continues,
    field: 'input',
    textType: (role) => (role === 'assistant' ? 'output_text' : 'input_text'),
  });
  if (continues) snapshot.continuesResponse = true;
  return snapshot;
}
