// Decoded OTLP records → cachebreak events and token counters. Each record is
// offered to the sources in order; the first that claims it maps it. A record
// no source claims is counted as ignored by reason, never an error; a claimed
// record that is malformed is rejected with a message naming the attribute.
import type { CacheEvent } from '../../../core/types.js';
import type { TokenPoint } from '../../../store/store.js';
import type { LogRecord, Span, Telemetry } from '../records.js';
import { claudeCode } from './claude-code.js';
import type { MappingContext } from './context.js';
import type { Half } from './halves.js';
import { geminiCli } from './gemini-cli.js';
import { genai } from './genai.js';
import { tokenMetrics } from './metrics.js';
import { native } from './native.js';
import { openInference } from './openinference.js';
import { withOrigin } from './origin.js';
import { qwenCode } from './qwen-code.js';
import { MappingError, type Outcome, type Source } from './source.js';
import { vercelAi } from './vercel-ai.js';

export { createMappingContext, type ContextOptions, type MappingContext } from './context.js';
export type { Outcome, Source } from './source.js';

/**
 * Harness sources come before the generic conventions: they claim all of
 * their own records, so that a span repeating what a harness's log records
 * count is never counted again. Vercel AI SDK and OpenInference spans also
 * carry gen_ai.* attributes with different meanings, so they go before genai.
 */
export const SOURCES: readonly Source[] = [native, claudeCode, qwenCode, geminiCli, vercelAi, openInference, genai, tokenMetrics];

export interface Mapped {
  events: CacheEvent[];
  /** The record each event came from (`logs[3] (native)`), to name it when the store rejects the event. */
  origins: string[];
  /** From token-usage metrics; they create no turns. */
  tokenPoints: TokenPoint[];
  /** Halves of joins left to the caller to pair through the store (MappingContext.halvesInStore), with the record each came from. */
  halves: { half: Half; origin: string }[];
  /** Records nothing uses, by reason; the caller knows the signal (an OTLP request carries one). */
  ignored: Record<string, number>;
  /** Recognised but malformed records. */
  rejected: { record: string; error: string }[];
}

/** What no source claimed: most spans are HTTP or tool spans, most log records other events. */
const UNCLAIMED = { logs: 'unknown_event', spans: 'no_usage', points: 'unknown_metric' } as const;

type Signal = keyof typeof UNCLAIMED;

function mapEach<R>(
  signal: Signal,
  records: readonly R[],
  offer: (source: Source, record: R) => Outcome | undefined,
  out: Mapped,
  halvesInStore: boolean,
): void {
  records.forEach((record, index) => {
    let current = SOURCES[0]!;
    try {
      let outcome: Outcome | undefined;
      for (const source of SOURCES) {
        current = source;
        outcome = offer(source, record);
        if (outcome !== undefined) break;
      }
      if (outcome === undefined) count(out, UNCLAIMED[signal]);
      else if ('ignored' in outcome) count(out, outcome.ignored);
      else if ('events' in outcome) {
        const origin = `${signal}[${index}] (${current.name})`;
        // Joined halves carry no origin: which half's record gave it would depend on arrival.
        const events = signal === 'points' ? [...outcome.events] : withOrigin(outcome.events, record as LogRecord | Span);
        for (const half of outcome.halves ?? []) {
          if (halvesInStore) out.halves.push({ half, origin });
          else events.push(...half.pairInMemory());
        }
        out.events.push(...events);
        for (let i = 0; i < events.length; i++) out.origins.push(origin);
      }
      else out.tokenPoints.push(...outcome.tokenPoints);
    } catch (error) {
      if (!(error instanceof MappingError)) throw error;
      out.rejected.push({ record: `${signal}[${index}] (${current.name})`, error: error.message });
    }
  });
}

function count(out: Mapped, reason: string): void {
  out.ignored[reason] = (out.ignored[reason] ?? 0) + 1;
}

export function mapTelemetry(telemetry: Telemetry, context: MappingContext): Mapped {
  const out: Mapped = { events: [], origins: [], tokenPoints: [], halves: [], ignored: {}, rejected: [] };
  const { halvesInStore } = context;
  for (const source of SOURCES) source.beforeLogs?.(telemetry.logs, context);
  mapEach('logs', telemetry.logs, (source, record) => source.log?.(record, context), out, halvesInStore);
  mapEach('spans', telemetry.spans, (source, span) => source.span?.(span, context), out, halvesInStore);
  mapEach('points', telemetry.points, (source, point) => source.point?.(point, context), out, halvesInStore);
  return out;
}
