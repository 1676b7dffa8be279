// Files to follow, with what they must produce: NDJSON turns whose breaks are
// known in advance, Claude Code debug logs with [PROMPT CACHE BREAK] lines
// among ordinary ones, and telemetry outfiles made of the OTel-file fixtures
// with fresh session and response ids per copy.
import { readFileSync } from 'node:fs';

export const T0 = Date.parse('2026-11-30T10:00:00.000Z');

const TOOLS = ['read_file', 'write_file', 'shell', 'grep', 'glob', 'web_fetch'].map((name, i) => ({ name, schemaHash: `h${i}` }));

export interface Turns {
  text: string;
  requestIds: string[];
  /** requestId → reason of the breaks cachebreak must find. */
  breaks: Record<string, string>;
}

/**
 * `count` turns of one session, 30 s apart, each reading the whole prefix
 * from the cache, except every 7th from the 4th: its tool list is sent in
 * another order, so it reads nothing and writes it all (tools_order_changed).
 */
export function turns(session: string, count: number, options: { at?: number; padTools?: number } = {}): Turns {
  const at = options.at ?? T0;
  const tools = [...TOOLS, ...Array.from({ length: options.padTools ?? 0 }, (_, i) => ({ name: `mcp__pad__tool_${i}`, schemaHash: `p${i}` }))];
  const lines: string[] = [];
  const requestIds: string[] = [];
  const breaks: Record<string, string> = {};
  for (let i = 0; i < count; i++) {
    const requestId = `${session}-r${i}`;
    const broken = i % 7 === 3;
    requestIds.push(requestId);
    if (broken) breaks[requestId] = 'tools_order_changed';
    lines.push(
      JSON.stringify({
        type: 'turn',
        requestId,
        sessionId: session,
        ts: new Date(at + i * 30_000).toISOString(),
        provider: 'anthropic',
        model: 'claude-sonnet-4-5',
        systemHash: 'sys-1',
        tools: broken ? [...tools].reverse() : tools,
        usage: {
          input_tokens: 50,
          cache_read_input_tokens: i === 0 || broken ? 0 : 40_000,
          cache_creation_input_tokens: i === 0 || broken ? 40_000 : 200,
          output_tokens: 300,
        },
      }),
    );
  }
  return { text: lines.join('\n') + '\n', requestIds, breaks };
}

export interface DebugLog {
  text: string;
  /** The [PROMPT CACHE BREAK] lines: reason, call number and line. */
  breaks: { reason: string; callNumber: number; line: number; ts: number }[];
}

const REASONS = [
  'tools changed (+1/-0 tools)',
  'system prompt changed (+42 chars)',
  'model changed (claude-sonnet-4-5 → claude-opus-4-1)',
  'possible 5min TTL expiry (prompt unchanged)',
];

/** A Claude Code debug log: `count` break lines, each after a few ordinary lines (one of them multi-line). */
export function claudeDebugLog(count: number, options: { at?: number; firstCall?: number } = {}): DebugLog {
  const at = options.at ?? T0;
  const lines: string[] = [];
  const breaks: DebugLog['breaks'] = [];
  for (let i = 0; i < count; i++) {
    const ts = at + i * 60_000;
    const iso = (ms: number) => new Date(ms).toISOString();
    lines.push(`${iso(ts)} [DEBUG] [API:request] Creating client for model claude-sonnet-4-5`);
    lines.push(`${iso(ts + 1)} [DEBUG] Tool search: 14 tools loaded`);
    lines.push(`${iso(ts + 2)} [ERROR] Hook failed: Error: exit 1`, '    at runHook (file:///cli.js:1:2)');
    const reason = REASONS[i % REASONS.length]!;
    const callNumber = (options.firstCall ?? 2) + i;
    const diff = i % 2 === 0 ? `, diff: /tmp/claude-1000/cache-break-${i}.diff` : '';
    lines.push(`${iso(ts + 3)} [WARN] [PROMPT CACHE BREAK] ${reason} [source=repl_main_thread, call #${callNumber}, cache read: 48000 → ${i * 10}, creation: 48900${diff}]`);
    breaks.push({ reason, callNumber, line: lines.length, ts: ts + 3 });
  }
  return { text: lines.join('\n') + '\n', breaks };
}

/**
 * `copies` of an OTel-file fixture, each a new session with new response ids.
 * Returns the text and the request ids the copies must produce (by suffix).
 */
export function outfile(fixture: 'qwen-code-0.24.4.log' | 'gemini-cli-0.61.0.log', copies: number): { text: string; sessions: string[] } {
  const original = readFileSync(new URL(`../fixtures/otel-file/${fixture}`, import.meta.url), 'utf8');
  const session = fixture.startsWith('qwen') ? '7f3c9a2e-4b1d-4e8a-9c6f-2d5e8a1b3c4d' : 'b2e4f6a8-1c3d-4e5f-8a9b-0c1d2e3f4a5b';
  const parts: string[] = [];
  const sessions: string[] = [];
  for (let c = 0; c < copies; c++) {
    const fresh = `${session.slice(0, -4)}${String(c).padStart(4, '0')}`;
    sessions.push(fresh);
    parts.push(original.replaceAll(session, fresh).replaceAll('chatcmpl-', `chatcmpl-c${c}-`));
  }
  return { text: parts.join(''), sessions };
}
