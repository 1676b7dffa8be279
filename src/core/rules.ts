// SPEC §4 in words, one entry per state, reason and cause. Typed by the lists
// in types.ts, so that a state, reason or cause cannot be added without saying
// what it means; docs/how-it-decides.md's tables are generated from here.
import { LOOKBACK_BLOCKS } from './attribution.js';
import { EARLIER_THINKING } from './caching.js';
import { MAX_UNTIMED_FLIGHT_MS } from './history.js';
import { DEFAULT_DETECTION } from './options.js';
import type { BreakCause, BreakReason, TtlSource, TurnState } from './types.js';

const { minMissTokens, missRatio } = DEFAULT_DETECTION;

/** In the order they are tried (SPEC §4.1). */
export const STATE_RULES: readonly (readonly [TurnState, string])[] = [
  ['unreported', 'the usage carried no cache field at all (left out of cache rates)'],
  ['expected', 'a miss the harness announced: `expectMiss` on its snapshot, or the first main-stream turn after a compaction'],
  ['miss', `a **break**: it read at least ${minMissTokens.toLocaleString('en-US')} tokens less than its baseline left cached, and less than ${missRatio * 100} % of that`],
  ['hit', 'it read from the cache (also a first turn reading what another stream wrote)'],
  ['uncached', 'nothing read, nothing written: caching not in effect, or a prompt below the automatic minimum'],
  ['cold', 'it wrote, explicitly or automatically, because there was nothing to read'],
];

/** SPEC §4.4, in prefix order (the marker reasons last): what changed, and where the change sits. */
export const REASON_RULES: Readonly<Record<BreakReason, { change: string; position: string }>> = {
  model_changed: { change: 'the model family differs (no earlier turn of its own family)', position: 'start' },
  tools_schema_changed: { change: 'a tool added, removed, or its schema hash changed', position: 'tools' },
  tools_order_changed: { change: 'the same tools in another relative order', position: 'tools' },
  system_changed: { change: 'the system prompt differs (`changedSystemBlocks`)', position: 'the first changed block, `system:k`' },
  request_params_changed: { change: '`thinking`, `toolChoice` or a `params` key differs (`changedParams`; from an Anthropic body: `output_config` (effort), `context_management`, `mcp_servers`, `speed`, and `citations` when a block turns them on)', position: '`messages:0`' },
  messages_rewritten: { change: 'the earlier messages are not a prefix of the new ones (`firstChangedMessageIndex`)', position: 'the first changed message' },
  cache_control_changed: {
    change: 'a marker inside the cached prefix re-timed (5m ↔ 1h, or another setting such as its scope), or caching turned off or keyed otherwise; adding, removing or moving a marker is not a change',
    position: 'the first re-timed marker',
  },
  breakpoint_lookback_exceeded: {
    change: `no breakpoint of the turn reaches the cached one: each lies before it, or more than ${LOOKBACK_BLOCKS} content blocks past it (Anthropic's lookback; none on OpenAI models)`,
    position: '—',
  },
  likely_provider_ttl_or_eviction: { change: 'nothing changed inside the cached prefix, and both snapshots were complete: see `cause`', position: '—' },
  unknown: { change: 'nothing found, but the snapshots were missing or incomplete', position: '—' },
};

/** SPEC §4.5: what the idle gap says against the baseline's retention. */
export const CAUSE_RULES: Readonly<Record<BreakCause, string>> = {
  ttl_expired: 'the gap passed the longest retention, or the shortest tier of an explicit cache (`partialExpiry` when a longer tier still held part)',
  possible_ttl_expiry: 'automatic caching, and the gap lies inside the provider\'s retention window',
  likely_server_eviction: 'the gap was shorter than the shortest retention',
};

export const TTL_SOURCE_RULES: Readonly<Record<TtlSource, string>> = {
  declared: 'the markers or retention the baseline asked for',
  previous_1h_write: 'a 1-hour write, with no TTL declared',
  provider_default: "the provider's default",
  unknown: 'the provider does not say: no cause is given',
};

/**
 * SPEC §4.12 in words, where version 3 of the rules changed it: how markers,
 * the lookback, the provider table and the clocks of a turn's parts are read.
 */
export const DETAIL_RULES: readonly (readonly [string, string])[] = [
  [
    'Markers',
    "are not part of the cache key: the key is the prefix's content. Adding, removing or moving a `cache_control` marker (the marker on the last two user messages that Cline, Roo and Copilot move every turn) changes where an entry is written and so what the next lookup can reach, which is the lookback's question. Only a re-timed marker (5m ↔ 1h) is `cache_control_changed`, and it never outranks a change of the content: with an edited earlier message the break is `messages_rewritten`. When the gap alone says the whole prefix expired, neither marker reason is named: the break is `ttl_expired`",
  ],
  [
    'Lookback',
    `is counted in content blocks, not messages: a lookup walks back at most ${LOOKBACK_BLOCKS} blocks from a breakpoint (one step with 12 parallel tool calls adds 25 blocks in 2 messages). Blocks per message come from \`messageBlockCounts\` (raw request bodies fill it); without them each message counts as one block. The turn's breakpoint that reaches the baseline's last one is its first message marker at or after it, within the lookback; a turn whose message markers all lie before it, or too far past it, cannot read the entry`,
  ],
  [
    'Providers',
    "differ, and the tables below say how: minimums by provider and model (overridable per provider or per model with `--min-cacheable`), retention windows, and how breakpoints behave. An OpenAI model's breakpoints have no lookback limit and its cache is held in OpenAI's window, whether or not its writes are reported",
  ],
  [
    'Thinking',
    `the API strips is not in the prompt, and the snapshot of a raw body hashes the messages as the model sees them. A turn starts with a user message that is more than tool results; ${EARLIER_THINKING.stripped} keep only the current turn's thinking, so once a new turn starts the thinking blocks of every earlier assistant message are stripped, and the cached messages go from the first of them: that request is \`messages_rewritten\` at that message, not an eviction, and the tool loop after it reads again. ${EARLIER_THINKING.kept} keep every thinking block. A \`clear_thinking_20251015\` edit in \`context_management\` overrides the model's default: the latest N turns keep their thinking (\`keep: {type: "thinking_turns", value: N}\`, one when left out) or all of them (\`keep: "all"\`). A cut body keeps its messages up to the first one whose thinking a turn past the cut could strip`,
  ],
  [
    'Stored conversations',
    "hold the earlier messages on the provider's side: an OpenAI Responses request with `previous_response_id` (or `conversation`) sends only its new input, and its snapshot says so (`continuesResponse`). Its messages are then not compared with the baseline's, nor are their markers and blocks, whose place in the prompt is not known: sending only what is new is no `messages_rewritten`. Its model, tools, instructions and parameters are compared as any request's, and a miss with none of them changed is judged by the gap. Which response it continues places it in its stream (the proxy reads each answer's id), and it is judged against that stream's baseline; whether the baseline is that very response is not stored, so a chain that forks from an earlier response is judged as one that goes on from the latest",
  ],
  [
    'Clocks',
    `of a turn's two parts may differ: a harness's snapshot and a gateway's usage can be minutes apart. The entry of a request whose time to first token is unknown counts as readable at its response end, but never earlier than its own start nor more than ${MAX_UNTIMED_FLIGHT_MS / 1000} s after it: a usage time from another clock cannot make a later request look parallel (\`concurrentRequestIds\`) for longer than that, nor take its baseline away`,
  ],
];
