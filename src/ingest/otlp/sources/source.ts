// What every source mapping implements: it looks at one decoded record and
// either claims it (events, token points, or a reason to ignore it) or says
// it is not its record, so that the next source can look. A recognised record
// that is malformed throws MappingError, whose message names the attribute.
import type { CacheEvent } from '../../../core/types.js';
import type { TokenPoint } from '../../../store/store.js';
import type { LogRecord, MetricPoint, Span } from '../records.js';
import type { MappingContext } from './context.js';
import type { Half } from './halves.js';

/**
 * A claimed record: its events (none while it waits for its other half, e.g.
 * a request body for its request id) and the halves it brings to a join
 * that may complete at another process (halves.ts), its token points, or why
 * it carries nothing for cachebreak.
 */
export type Outcome = { events: CacheEvent[]; halves?: Half[] } | { tokenPoints: TokenPoint[] } | { ignored: string };

/** undefined: not this source's record. */
export interface Source {
  readonly name: string;
  /** Looks at an export's log records together, before each is offered to log(). */
  beforeLogs?(records: readonly LogRecord[], context: MappingContext): void;
  log?(record: LogRecord, context: MappingContext): Outcome | undefined;
  span?(span: Span, context: MappingContext): Outcome | undefined;
  point?(point: MetricPoint, context: MappingContext): Outcome | undefined;
}

/** A recognised record that cannot be used; the message says which attribute and why, never its content. */
export class MappingError extends Error {
  override readonly name = 'MappingError';
}

export function ignored(reason: string): Outcome {
  return { ignored: reason };
}
