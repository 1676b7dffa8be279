// Which stream (SPEC §1: session and agent) a proxied request belongs to.
// The session comes from a header the harness sends: cachebreak's own, or the
// one a harness already sends for its conversation. The agent comes from
// x-cachebreak-agent, else from the first system block: a harness's subagents
// and side queries run with system prompts of their own, and interleaved in
// one stream they would look like breaks. Without any header, every request
// is in one session.
import type { IncomingHttpHeaders } from 'node:http';
import type { SnapshotContent } from '../../core/types.js';

/** Headers that name the conversation, most specific first. */
export const SESSION_HEADERS = ['x-cachebreak-session', 'x-claude-code-session-id', 'session-id', 'session_id', 'x-session-id'] as const;
export const AGENT_HEADER = 'x-cachebreak-agent';
/** The session of requests that name none. */
export const DEFAULT_SESSION = 'proxy';

export interface StreamIdentity {
  sessionId: string;
  agentId: string;
}

/** A header's single value, when it is one an id may be: printable, not empty, at most `maxLength`. */
function idFrom(value: string | string[] | undefined, maxLength: number): string | undefined {
  if (typeof value !== 'string') return undefined;
  const id = value.trim();
  return id !== '' && id.length <= maxLength && /^[\x21-\x7e]+$/.test(id) ? id : undefined;
}

export function identityOf(headers: IncomingHttpHeaders, snapshot: SnapshotContent, maxLength: number): StreamIdentity {
  let sessionId: string | undefined;
  for (const name of SESSION_HEADERS) {
    sessionId = idFrom(headers[name], maxLength);
    if (sessionId !== undefined) break;
  }
  const firstBlock = snapshot.systemBlockHashes?.[0];
  return {
    sessionId: sessionId ?? DEFAULT_SESSION,
    agentId: idFrom(headers[AGENT_HEADER], maxLength) ?? (firstBlock === undefined ? 'main' : `system-${firstBlock.slice(0, 8)}`),
  };
}
