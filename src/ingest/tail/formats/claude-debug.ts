// Claude Code debug logs (`~/.claude/debug/<session>.txt`, or named after the
// process in headless runs): lines `<ISO time> [LEVEL] message`. Its own
// cache-break detector writes
//   [PROMPT CACHE BREAK] <reason> [source=<query source>, call #N, cache read: A → B, creation: C, diff: <path>]
// (the diff part only when it wrote one). Those lines are kept as breaks the
// harness reported, reason text verbatim, to set beside cachebreak's own
// attribution; every other line is ignored and never stored.
import { basename, extname } from 'node:path';
import type { ExternalBreak } from '../../../store/store.js';
import { claudeAgent } from '../../otlp/sources/claude-code.js';
import { timeProblem } from '../../../time.js';
import { unitText, type Decoder, type FileContext } from './decoder.js';

const LINE = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z) \[([A-Z]+)\] (.*)$/;
const MARK = '[PROMPT CACHE BREAK] ';
const BREAK = /^(.+) \[source=([^,\]]*), call #(\d+), cache read: (\d+) → (\d+), creation: (\d+)(?:, diff: (.+))?\]$/;

/**
 * The debug log is named after its session (`latest` is a link to it,
 * resolved before this is called). A headless run names it after its
 * process instead: reports of a name that is no known session are joined to
 * their breaks by time and cache figures (core/verdicts.ts).
 */
export function sessionOfDebugLog(path: string): string {
  const name = basename(path);
  return name.slice(0, name.length - extname(name).length) || name;
}

export function parseBreakLine(message: string): Omit<ExternalBreak, 'sessionId' | 'ts' | 'file' | 'line'> | undefined {
  const m = BREAK.exec(message.slice(MARK.length));
  if (!m) return undefined;
  const source = m[2]!;
  return {
    harness: 'claude-code',
    agentId: claudeAgent({ query_source: source }),
    source,
    reason: m[1]!,
    callNumber: Number(m[3]),
    previousCacheReadTokens: Number(m[4]),
    currentCacheReadTokens: Number(m[5]),
    cacheCreationTokens: Number(m[6]),
    diffPath: m[7] ?? null,
  };
}

export function claudeDebugDecoder(file: FileContext): Decoder {
  const sessionId = sessionOfDebugLog(file.path);
  return {
    decode(bytes, start, end, line, out) {
      if (end === start) return;
      out.units++;
      const text = unitText(bytes, start, end);
      const m = LINE.exec(text);
      // Continuation lines of multi-line messages carry no time: never a break line.
      if (!m || !m[3]!.startsWith(MARK)) {
        out.ignored++;
        return;
      }
      const parsed = parseBreakLine(m[3]!);
      if (!parsed) {
        out.rejected.push({ line, error: 'a [PROMPT CACHE BREAK] line without its [source=…, call #N, cache read: A → B, creation: C] part' });
        return;
      }
      const ts = Date.parse(m[1]!);
      const problem = timeProblem(ts);
      if (problem !== undefined) out.rejected.push({ line, error: `the line's time: ${problem}` });
      else out.externalBreaks.push({ ...parsed, sessionId, ts, file: file.path, line });
    },
    waiting: () => false,
  };
}
