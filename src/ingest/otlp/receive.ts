// The one Export path of both OTLP transports: decoded records are mapped to
// cachebreak events by the sources, what nothing uses is counted as ignored,
// and the events go to the pipeline. gRPC and HTTP differ only in how they
// read the request and render the answer.
import type { Pipeline, Receiver } from '../pipeline.js';
import type { Counters } from '../../telemetry/counters.js';
import type { Decoded, Signal } from './decode/index.js';
import type { ExportOutcome } from './reply.js';
import { createMappingContext, type MappingContext } from './sources/context.js';
import { mapTelemetry } from './sources/index.js';

/** Rejections quoted in a partial-success message; the count covers the rest. */
const QUOTED = 3;

export class OtlpReceiver {
  /** Joins wait per project: a half from one project never completes a call of another. */
  private readonly contexts = new Map<string, MappingContext>();

  constructor(private readonly deps: { pipeline: Pipeline; counters: Counters; now: () => number }) {}

  async export(project: string, signal: Signal, decoded: Decoded, receiver: Extract<Receiver, 'otlp_http' | 'otlp_grpc'>): Promise<ExportOutcome> {
    const { telemetry } = decoded;
    this.countIgnored(project, signal, decoded.ignored);
    if (telemetry.logs.length === 0 && telemetry.spans.length === 0 && telemetry.points.length === 0) {
      return { rejected: 0, errorMessage: '' };
    }
    const mapped = mapTelemetry(telemetry, this.context(project));
    this.countIgnored(project, signal, mapped.ignored);
    this.deps.pipeline.rejected(project, receiver, mapped.rejected.length);
    await this.deps.pipeline.ingest(project, mapped.events, receiver, mapped.tokenPoints);
    const rejected = mapped.rejected.length;
    if (rejected === 0) return { rejected: 0, errorMessage: '' };
    const quoted = mapped.rejected.slice(0, QUOTED).map((r) => `${r.record}: ${r.error}`.slice(0, 300));
    const more = rejected > QUOTED ? `; and ${rejected - QUOTED} more` : '';
    return { rejected, errorMessage: `${rejected} record(s) rejected: ${quoted.join('; ')}${more}` };
  }

  private context(project: string): MappingContext {
    let context = this.contexts.get(project);
    if (!context) {
      context = createMappingContext({ now: this.deps.now });
      this.contexts.set(project, context);
    }
    return context;
  }

  /** Reasons may carry the record kind as a prefix (`spans:no_usage`); the signal label already says it. */
  private countIgnored(project: string, signal: Signal, ignored: Readonly<Record<string, number>>): void {
    for (const key in ignored) this.deps.counters.inc('otlpIgnored', { project, signal, reason: key.slice(key.indexOf(':') + 1) }, ignored[key]!);
  }
}
