// Which stream (SPEC §1: session and agent) a proxied request belongs to.
// The session comes from a header the harness sends: cachebreak's own, or the
// one a harness already sends for its conversation. Without any header, every
// request is in one session.
//
// The agent is x-cachebreak-agent when sent. Otherwise it is found by lineage:
// a request continues the stream of its conversation, so that editing the
// system prompt (QWEN.md, GEMINI.md, CLAUDE.md) or switching the model is a
// break of that stream rather than the start of a new one. Subagents, side
// queries and router calls have system prompts and conversations of their own
// and get streams of their own, interleaved in one session without breaks. A
// request continues, in this order:
//   0. the stream whose latest response it goes on from (OpenAI Responses
//      `previous_response_id`): its instructions may have changed;
//   1. the stream with its first system block and its first message;
//   2. the stream whose conversation it extends (same first message, more
//      messages, every earlier one kept; the longest such) on the same model
//      family with the same tools, or tools only added or only removed: its
//      system prompt changed. A side call that forks the conversation under
//      a system prompt and tools of its own (Qwen Code's memory extraction,
//      after every turn) is not the conversation going on;
//   3. the stream with its first system block: its conversation was rewritten
//      or started anew;
//   4. the stream whose conversation the request carries again, every earlier
//      message kept but the first, on the same model family with the same
//      tools or tools only added or only removed: a conversation resumed with
//      its system prompt edited (or naming other tools) and its first message
//      rebuilt (Qwen Code's --resume rebuilds it);
// else it starts a stream, named after its first system block. Lineage is
// kept in memory, bounded; after a restart a continuing conversation whose
// system prompt was edited before starts a new stream.
import type { IncomingHttpHeaders } from 'node:http';
import { modelFamily } from '../../core/family.js';
import { hashString } from '../../core/hash.js';
import type { SnapshotContent } from '../../core/types.js';
import type { ResponseChain } from './openai.js';

/** Headers that name the conversation, most specific first. */
export const SESSION_HEADERS = ['x-cachebreak-session', 'x-claude-code-session-id', 'session-id', 'session_id', 'x-session-id'] as const;
export const AGENT_HEADER = 'x-cachebreak-agent';
/** The session of requests that name none. */
export const DEFAULT_SESSION = 'proxy';

/** Sessions whose lineage is kept (the least recently seen go first), and streams per session. */
const MAX_SESSIONS = 4_096;
const MAX_STREAMS = 16;

export interface StreamIdentity {
  sessionId: string;
  agentId: string;
}

/** What a stream's latest request looked like: enough to tell whether the next one continues it. */
interface Seen {
  agentId: string;
  system: string | undefined;
  first: string | undefined;
  family: string | undefined;
  /** The request's tool names, sorted, one a line. */
  tools: string;
  messages: number;
  /** Hash of every message hash but the last: what a continuation keeps. */
  kept: string;
  /** Hash of every message hash but the first and the last: what a resumed conversation keeps. */
  keptAfterFirst: string;
  /** Hash of the id of the stream's latest stored response, when it has one. */
  response: string | undefined;
}

/** A header's single value, when it is one an id may be: printable, not empty, at most `maxLength`. */
function idFrom(value: string | string[] | undefined, maxLength: number): string | undefined {
  if (typeof value !== 'string') return undefined;
  const id = value.trim();
  return id !== '' && id.length <= maxLength && /^[\x21-\x7e]+$/.test(id) ? id : undefined;
}

/** The stream with the most messages: of the conversations a request extends, the one it goes on. */
const longest = (streams: readonly Seen[]): Seen | undefined => streams.reduce<Seen | undefined>((best, s) => (best === undefined || s.messages > best.messages ? s : best), undefined);

const keptOf = (messages: readonly string[], count: number) => hashString(messages.slice(0, count).join(','));
const keptAfterFirst = (messages: readonly string[], count: number) => hashString(messages.slice(1, count).join(','));

const toolNames = (snapshot: SnapshotContent) => [...new Set((snapshot.tools ?? []).map((tool) => tool.name))].sort().join('\n');

/** The same tools, or tools only added or only removed (none left is no longer the same harness's tools). */
function sameTools(a: string, b: string): boolean {
  if (a === b) return true;
  if (a === '' || b === '') return false;
  const [fewer, more] = a.length < b.length ? [a.split('\n'), new Set(b.split('\n'))] : [b.split('\n'), new Set(a.split('\n'))];
  return fewer.every((name) => more.has(name));
}

export class StreamLineage {
  /** Per project and session, its streams, the most recently continued first. */
  private readonly sessions = new Map<string, Seen[]>();

  identityOf(project: string, headers: IncomingHttpHeaders, snapshot: SnapshotContent, maxLength: number, chain: ResponseChain = {}): StreamIdentity {
    let sessionId: string | undefined;
    for (const name of SESSION_HEADERS) {
      sessionId = idFrom(headers[name], maxLength);
      if (sessionId !== undefined) break;
    }
    sessionId ??= DEFAULT_SESSION;
    const agentId = idFrom(headers[AGENT_HEADER], maxLength) ?? this.agentOf(`${project}\u0000${sessionId}`, snapshot, chain);
    return { sessionId, agentId };
  }

  private agentOf(key: string, snapshot: SnapshotContent, chain: ResponseChain): string {
    const streams = this.sessions.get(key) ?? [];
    this.sessions.delete(key);
    this.sessions.set(key, streams);
    if (this.sessions.size > MAX_SESSIONS) this.sessions.delete(this.sessions.keys().next().value!);

    // After a stored conversation (previous_response_id), the messages are only the new input: not the conversation.
    const messages = snapshot.continuesResponse ? [] : (snapshot.messageHashes ?? []);
    const request = {
      system: snapshot.systemBlockHashes?.[0],
      first: messages[0],
      family: snapshot.model === undefined ? undefined : modelFamily(snapshot.model),
      tools: toolNames(snapshot),
      messages: messages.length,
    };
    const continues = (s: Seen) =>
      request.first !== undefined && s.first === request.first && s.family === request.family && sameTools(s.tools, request.tools) && request.messages > s.messages && keptOf(messages, s.messages - 1) === s.kept;
    const previous = chain.previous === undefined ? undefined : hashString(chain.previous);
    const found =
      (previous === undefined ? undefined : streams.find((s) => s.response === previous)) ??
      streams.find((s) => s.system === request.system && s.first === request.first) ??
      longest(streams.filter(continues)) ??
      streams.find((s) => s.system === request.system) ??
      streams.find((s) => request.messages > 1 && request.messages > s.messages && s.family === request.family && sameTools(s.tools, request.tools) && keptAfterFirst(messages, s.messages - 1) === s.keptAfterFirst);
    const seen: Seen = {
      agentId: found?.agentId ?? this.newAgent(streams, request.system),
      ...request,
      kept: keptOf(messages, messages.length - 1),
      keptAfterFirst: keptAfterFirst(messages, messages.length - 1),
      response: chain.response === undefined ? undefined : hashString(chain.response),
    };
    if (found) streams.splice(streams.indexOf(found), 1);
    streams.unshift(seen);
    if (streams.length > MAX_STREAMS) streams.pop();
    return seen.agentId;
  }

  /** A stream named after its first system block ('main' without one), numbered when a stream of the session has the name. */
  private newAgent(streams: readonly Seen[], system: string | undefined): string {
    const base = system === undefined ? 'main' : `system-${system.slice(0, 8)}`;
    let name = base;
    for (let n = 2; streams.some((s) => s.agentId === name); n++) name = `${base}-${n}`;
    return name;
  }
}
