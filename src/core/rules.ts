// SPEC §4 in words, one entry per state, reason and cause. Typed by the lists
// in types.ts, so that a state, reason or cause cannot be added without saying
// what it means; docs/how-it-decides.md's tables are generated from here.
import { LOOKBACK_ENTRIES } from './attribution.js';
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

/** SPEC §4.4, in prefix order: what changed, and where the change sits. */
export const REASON_RULES: Readonly<Record<BreakReason, { change: string; position: string }>> = {
  model_changed: { change: 'the model family differs (no earlier turn of its own family)', position: 'start' },
  tools_schema_changed: { change: 'a tool added, removed, or its schema hash changed', position: 'tools' },
  tools_order_changed: { change: 'the same tools in another relative order', position: 'tools' },
  system_changed: { change: 'the system prompt differs (`changedSystemBlocks`)', position: 'the first changed block, `system:k`' },
  cache_control_changed: { change: 'a marker added, removed or re-timed inside the cached prefix', position: 'the first differing marker' },
  request_params_changed: { change: '`thinking`, `toolChoice` or a `params` key differs (`changedParams`)', position: '`messages:0`' },
  messages_rewritten: { change: 'the earlier messages are not a prefix of the new ones (`firstChangedMessageIndex`)', position: 'the first changed message' },
  breakpoint_lookback_exceeded: { change: `the new breakpoint is more than ${LOOKBACK_ENTRIES} entries past the cached one: the lookup cannot reach it`, position: '—' },
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
