// The fingerprint of a break's cause: what broke and which part changed, with
// nothing of the session, the time or the figures, so the same cause in many
// sessions (one tool re-ordered by an agent version, one system block edited
// every day) collapses into one row. 16 lowercase hex digits (SPEC §7 hash).
//
// What identifies the changed part, by reason:
// - tools_schema_changed, tools_order_changed: the tools added, removed,
//   re-described and moved, by name, each list sorted;
// - system_changed: the indexes of the changed system blocks;
// - request_params_changed: the names of the changed parameters;
// - model_changed: the family of the model asked for (the record names only
//   the turn's model, not the baseline's);
// - likely_provider_ttl_or_eviction, unknown, messages_rewritten and the
//   marker reasons: the provider and the model family, with the cause
//   (ttl_expired, possible_ttl_expiry, likely_server_eviction).
// Lists are sorted so that the order in which a detector found them does not
// count. A new element of the identity needs a new version below.
import { byCodePoint, hashValue } from './hash.js';
import { modelFamily } from './family.js';
import type { BreakRecord } from './types.js';

/** Bump when the identity of a cause changes: fingerprints of two versions never meet. */
const VERSION = 1;

const sortedNames = (names: readonly string[]): string[] => [...new Set(names)].sort(byCodePoint);
const sortedNumbers = (values: readonly number[]): number[] => [...new Set(values)].sort((a, b) => a - b);

type Cause = Pick<BreakRecord, 'reason' | 'cause' | 'provider' | 'model' | 'toolChanges' | 'changedToolNames' | 'changedSystemBlocks' | 'changedParams'>;

function partOf(record: Cause): Record<string, unknown> {
  const family = record.model === null ? null : modelFamily(record.model);
  switch (record.reason) {
    case 'tools_schema_changed':
    case 'tools_order_changed': {
      const t = record.toolChanges;
      return {
        tools: sortedNames(record.changedToolNames),
        added: sortedNames(t.added),
        removed: sortedNames(t.removed),
        schemaChanged: sortedNames(t.schemaChanged),
        moved: sortedNames(t.moved),
      };
    }
    case 'system_changed':
      return { systemBlocks: sortedNumbers(record.changedSystemBlocks ?? []) };
    case 'request_params_changed':
      return { params: sortedNames(record.changedParams) };
    case 'model_changed':
      return { family };
    default:
      return { provider: record.provider, family };
  }
}

/** The fingerprint of a break's cause: equal for the same cause in any session, at any time. */
export function breakFingerprint(record: Cause): string {
  return hashValue({ v: VERSION, reason: record.reason, cause: record.cause, part: partOf(record) });
}
