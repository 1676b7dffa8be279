// The one Export path of both OTLP transports: decoded records are mapped to
// cachebreak events by the sources, what nothing uses is counted as ignored,
// the halves of joins that any process may complete are paired through the
// store, and the events go to the pipeline. gRPC and HTTP differ only in how
// they read the request and render the answer.
import { tooManyEvents } from '../http/route.js';
import { LIMIT_OPTIONS, type Limits } from '../limits.js';
import type { Pipeline, Receiver } from '../pipeline.js';
import type { Telemetry } from './records.js';
import type { WaitBounds, WaitingHalf } from '../../store/store.js';
import type { Counters } from '../../telemetry/counters.js';
import type { Decoded, Signal } from './decode/index.js';
import type { ExportOutcome } from './reply.js';
import { createMappingContext, DEFAULT_WAITING_BYTES, MAX_WAIT_MS, type MappingContext } from './sources/context.js';
import { footprint } from './sources/footprint.js';
import { mapTelemetry, type Mapped } from './sources/index.js';

/** Records with more attributes than the limit are rejected one by one (partial success), not the request. */
function withinAttributeLimit(telemetry: Telemetry, max: number): { telemetry: Telemetry; oversized: { record: string; error: string }[] } {
  const oversized: { record: string; error: string }[] = [];
  const keep = <R extends { attributes: Readonly<Record<string, unknown>> }>(kind: string, list: R[]) =>
    list.filter((record, index) => {
      const count = Object.keys(record.attributes).length;
      if (count <= max) return true;
      oversized.push({ record: `${kind}[${index}]`, error: `has ${count} attributes; the limit is ${max} (${LIMIT_OPTIONS.maxAttributes})` });
      return false;
    });
  return {
    telemetry: { logs: keep('logs', telemetry.logs), spans: keep('spans', telemetry.spans), points: keep('points', telemetry.points) },
    oversized,
  };
}

/** Rejections quoted in a partial-success message; the count covers the rest. */
const QUOTED = 3;

export class OtlpReceiver {
  /** Joins wait per project: a half from one project never completes a call of another. */
  private readonly contexts = new Map<string, MappingContext>();

  constructor(
    private readonly deps: { pipeline: Pipeline; counters: Counters; now: () => number; limits: Limits; maxWaitingBytes?: number | undefined },
  ) {}

  async export(project: string, signal: Signal, decoded: Decoded, receiver: Extract<Receiver, 'otlp_http' | 'otlp_grpc'>): Promise<ExportOutcome> {
    const { limits } = this.deps;
    const records = decoded.telemetry.logs.length + decoded.telemetry.spans.length + decoded.telemetry.points.length;
    if (records > limits.maxEvents) throw tooManyEvents(records, limits.maxEvents);
    const { telemetry, oversized } = withinAttributeLimit(decoded.telemetry, limits.maxAttributes);
    this.countIgnored(project, signal, decoded.ignored);
    if (telemetry.logs.length === 0 && telemetry.spans.length === 0 && telemetry.points.length === 0 && oversized.length === 0) {
      return { rejected: 0, errorMessage: '' };
    }
    const context = this.context(project);
    const mapped = mapTelemetry(telemetry, context);
    const unjoin = context.joined();
    /** Halves this request took from the store: put back when its events are not stored. */
    const taken: WaitingHalf[] = [];
    try {
      await this.pairHalves(project, mapped, taken);
      mapped.rejected.push(...oversized);
      this.countIgnored(project, signal, mapped.ignored);
      this.deps.pipeline.rejected(project, receiver, mapped.rejected.length);
      const counts = await this.deps.pipeline.ingest(project, mapped.events, receiver, mapped.tokenPoints);
      for (const r of counts.rejected ?? []) mapped.rejected.push({ record: mapped.origins[r.event]!, error: `${r.field}: ${r.problem}` });
    } catch (error) {
      // Not stored (429, 503): the retry of this request must be able to join again.
      unjoin();
      await this.putBack(project, taken);
      throw error;
    }
    const cut = mapped.events.filter((event) => event.type !== 'usage' && event.partial !== undefined).length;
    this.deps.counters.inc('bodiesTruncated', { project }, cut);
    const rejected = mapped.rejected.length;
    if (rejected === 0) return { rejected: 0, errorMessage: '' };
    const quoted = mapped.rejected.slice(0, QUOTED).map((r) => `${r.record}: ${r.error}`.slice(0, 300));
    const more = rejected > QUOTED ? `; and ${rejected - QUOTED} more` : '';
    return { rejected, errorMessage: `${rejected} record(s) rejected: ${quoted.join('; ')}${more}` };
  }

  private bounds(): WaitBounds {
    return { now: this.deps.now(), maxAgeMs: MAX_WAIT_MS, maxBytes: this.deps.maxWaitingBytes ?? DEFAULT_WAITING_BYTES };
  }

  /**
   * Pairs each half through the store, in record order, then the halves its
   * join or its waiting brings (a Gemini CLI or Qwen Code call's records,
   * once paired, join their span): their events join the request's.
   */
  private async pairHalves(project: string, mapped: Mapped, taken: WaitingHalf[]): Promise<void> {
    const queue = [...mapped.halves];
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
      const { half, origin } = next;
      const waiting: WaitingHalf = { key: half.key, kind: half.kind, value: JSON.stringify(half.value), bytes: footprint(half.key) + footprint(half.value) };
      if (half.partnerKeys) waiting.partnerKeys = half.partnerKeys;
      if (half.choose) waiting.choose = (others) => half.choose!(others.map((other) => JSON.parse(other.value)));
      const pairing = await this.deps.pipeline.pairHalf(project, waiting, this.bounds());
      for (const table of pairing.evicted) this.deps.counters.inc('waitingEvicted', { project, table, reason: 'bytes' });
      if (pairing.other !== undefined) taken.push(pairing.other);
      const joined = pairing.other === undefined ? half.unpaired?.() : half.join(JSON.parse(pairing.other.value));
      if (joined === undefined) continue;
      mapped.events.push(...joined.events);
      for (let i = 0; i < joined.events.length; i++) mapped.origins.push(origin);
      queue.push(...joined.halves.map((further) => ({ half: further, origin })));
    }
  }

  /** A store that cannot take a half back could not take the events either: the retry's call then has no snapshot. */
  private async putBack(project: string, taken: readonly WaitingHalf[]): Promise<void> {
    for (const half of taken) {
      try {
        const { evicted } = await this.deps.pipeline.pairHalf(project, half, this.bounds(), true);
        for (const table of evicted) this.deps.counters.inc('waitingEvicted', { project, table, reason: 'bytes' });
      } catch {
        return;
      }
    }
  }

  private context(project: string): MappingContext {
    let context = this.contexts.get(project);
    if (!context) {
      const { now, limits, maxWaitingBytes, counters } = this.deps;
      context = createMappingContext({
        now,
        limits,
        ...(maxWaitingBytes !== undefined ? { maxBytes: maxWaitingBytes } : {}),
        evicted: (table, reason) => counters.inc('waitingEvicted', { project, table, reason }),
        halvesInStore: true,
      });
      this.contexts.set(project, context);
    }
    return context;
  }

  /** Reasons may carry the record kind as a prefix (`spans:no_usage`); the signal label already says it. */
  private countIgnored(project: string, signal: Signal, ignored: Readonly<Record<string, number>>): void {
    for (const key in ignored) this.deps.counters.inc('otlpIgnored', { project, signal, reason: key.slice(key.indexOf(':') + 1) }, ignored[key]!);
  }
}
