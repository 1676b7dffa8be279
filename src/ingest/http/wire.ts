// A domain event back as the ingest contract's JSON (SPEC §2): what
// `tail --server` posts for events it read from files, so that the server
// stores exactly what a local database would. Raw content was hashed when
// the event was made; only hashes and counts are sent.
import { ORIGIN_KEYS, type CacheEvent, type SnapshotContent, type TurnOrigin, type Usage } from '../../core/types.js';

function content(c: SnapshotContent): Record<string, unknown> {
  const out: Record<string, unknown> = { model: c.model };
  if (c.systemHash !== undefined) out.systemHash = c.systemHash;
  if (c.systemBlockHashes !== undefined) out.systemBlockHashes = c.systemBlockHashes;
  if (c.tools !== undefined) out.tools = c.tools;
  if (c.cacheControl !== undefined) out.cacheControl = c.cacheControl;
  if (c.cacheControlHash !== undefined) out.cacheControlHash = c.cacheControlHash;
  if (c.messageHashes !== undefined) out.messageHashes = c.messageHashes;
  if (c.messageBlockCounts !== undefined) out.messageBlockCounts = c.messageBlockCounts;
  if (c.prefixChars !== undefined) out.prefixChars = c.prefixChars;
  for (const key of ['thinking', 'thinkingHash', 'toolChoice', 'toolChoiceHash', 'params', 'partial', 'continuesResponse'] as const) {
    if (c[key] !== undefined) out[key] = c[key];
  }
  return out;
}

/**
 * Normalised counts: a usage without cache fields sends none, so it stays
 * "unreported"; one without a write field sends none, so it stays automatic
 * caching (SPEC §4.12).
 */
function tokens(u: Usage): Record<string, number> {
  if (!u.cacheReported) return { uncachedInputTokens: u.uncached, outputTokens: u.output };
  const counts: Record<string, number> = { uncachedInputTokens: u.uncached, cacheReadInputTokens: u.read, outputTokens: u.output };
  if (u.writeReported) Object.assign(counts, { cacheWriteInputTokens: u.write, cacheWrite1hInputTokens: u.write1h });
  return counts;
}

function origin(o: TurnOrigin): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of ORIGIN_KEYS) if (o[key] !== undefined) out[key] = o[key];
  return out;
}

export function wireEvent(event: CacheEvent): Record<string, unknown> {
  switch (event.type) {
    case 'snapshot': {
      const { type, requestId, sessionId, agentId, ts, provider, expectMiss } = event;
      return {
        type, requestId, sessionId, agentId, ts,
        ...(provider !== undefined ? { provider } : {}),
        ...(expectMiss !== undefined ? { expectMiss } : {}),
        ...origin(event),
        ...content(event),
      };
    }
    case 'usage': {
      const { type, requestId, sessionId, agentId, ts, ttftMs, provider, model, diagnostics } = event;
      return {
        type, requestId,
        ...(provider !== undefined ? { provider } : {}),
        ...(ttftMs !== undefined ? { ttftMs } : {}),
        ...(sessionId !== undefined ? { sessionId } : {}),
        ...(agentId !== undefined ? { agentId } : {}),
        ...(ts !== undefined ? { ts } : {}),
        ...(model !== undefined ? { model } : {}),
        ...(diagnostics !== undefined ? { diagnostics } : {}),
        ...origin(event),
        ...tokens(event.usage),
      };
    }
    case 'turn': {
      const { type, requestId, sessionId, agentId, ts, provider, endTs, ttftMs, expectMiss, diagnostics } = event;
      return {
        type, requestId, sessionId, agentId, ts,
        ...(provider !== undefined ? { provider } : {}),
        ...(endTs !== undefined ? { endTs } : {}),
        ...(ttftMs !== undefined ? { ttftMs } : {}),
        ...(expectMiss !== undefined ? { expectMiss } : {}),
        ...(diagnostics !== undefined ? { diagnostics } : {}),
        ...origin(event),
        ...content(event),
        ...tokens(event.usage),
      };
    }
  }
}
