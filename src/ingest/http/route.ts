// POST /v1/events: cachebreak's own ingest contract (SPEC §2), with partial
// success: bad events come back in `rejected`, the rest are stored.
import type { Hono } from 'hono';
import type { AppDeps, AppEnv } from '../../app.js';
import { CachebreakError } from '../../errors.js';
import type { CacheEvent } from '../../core/types.js';
import { LIMIT_OPTIONS } from '../limits.js';
import { mediaType, readBody } from './body.js';
import { decodeEvents, JSON_TYPES, NDJSON_TYPES } from './decode.js';
import { toCacheEvent, type Rejection } from './events.js';
import { eventsJsonSchema } from './schema.js';

/** 413 for a request that holds more events than --max-events. */
export function tooManyEvents(count: number, limit: number): CachebreakError {
  return new CachebreakError(
    'payload_too_large',
    `the request holds ${count} events; the limit is ${limit} (${LIMIT_OPTIONS.maxEvents})`,
    'send them in several requests, or raise --max-events on the server',
  );
}

/** An accepted event that carried keys the contract does not know: stored without them, and said so. */
interface Warning {
  index: number;
  unknownKeys: string[];
  message: string;
}

function unknownKeysWarning(index: number, keys: string[]): Warning {
  return { index, unknownKeys: keys, message: `events[${index}]: unknown keys ignored: ${keys.join(', ')} (a typo? GET /v1/events/schema lists every field)` };
}

export function registerEvents(app: Hono<AppEnv>, deps: AppDeps): void {
  app.post('/v1/events', async (c) => {
    const type = mediaType(c.req.raw);
    if (!JSON_TYPES.has(type) && !NDJSON_TYPES.has(type)) {
      throw new CachebreakError(
        'unsupported_media_type',
        `Content-Type "${type.slice(0, 80) || '(none)'}" is not accepted`,
        'send application/json ({"events": [...]} or an array) or application/x-ndjson (one event per line)',
      );
    }
    const values = decodeEvents(await readBody(c.req.raw, c.var.body), type);
    if (values.length > deps.limits.maxEvents) throw tooManyEvents(values.length, deps.limits.maxEvents);
    const events: CacheEvent[] = [];
    /** The request index of each event. */
    const indices: number[] = [];
    const rejected: Rejection[] = [];
    const warnings: Warning[] = [];
    values.forEach((decoded, index) => {
      if (!decoded.ok) {
        rejected.push({ index, field: 'event', error: `events[${index}]: ${decoded.error}` });
        return;
      }
      const converted = toCacheEvent(decoded.value, deps.limits);
      if (converted.ok) {
        events.push(converted.event);
        indices.push(index);
        if (converted.unknownKeys.length > 0) warnings.push(unknownKeysWarning(index, converted.unknownKeys));
      } else {
        const error = converted.issues.map((issue) => `events[${index}].${issue.field}: ${issue.problem}`).join('; ');
        rejected.push({ index, field: converted.field, error });
      }
    });
    deps.pipeline.rejected(c.var.project, 'http', rejected.length);
    const result = await deps.pipeline.ingest(c.var.project, events, 'http');
    for (const { event, field, problem } of result.rejected ?? []) {
      const index = indices[event]!;
      rejected.push({ index, field, error: `events[${index}]${field === 'event' ? '' : `.${field}`}: ${problem}` });
    }
    rejected.sort((a, b) => a.index - b.index);
    // `warnings` only when there are some: the contract's answer is unchanged for events it fully reads.
    return c.json({ accepted: result.accepted, duplicates: result.duplicates, rejected, ...(warnings.length > 0 ? { warnings } : {}) });
  });

  const schema = eventsJsonSchema(deps.limits);
  app.get('/v1/events/schema', (c) => c.json(schema as object));
}
