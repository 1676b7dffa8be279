// POST /v1/events: cachebreak's own ingest contract (SPEC §2), with partial
// success: bad events come back in `rejected`, the rest are stored.
import type { Hono } from 'hono';
import type { AppDeps, AppEnv } from '../../app.js';
import { CachebreakError } from '../../errors.js';
import type { CacheEvent } from '../../core/types.js';
import { mediaType, readBody } from './body.js';
import { decodeEvents, JSON_TYPES, NDJSON_TYPES } from './decode.js';
import { toCacheEvent, type Rejection } from './events.js';
import { eventsJsonSchema } from './schema.js';

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
    const values = decodeEvents(await readBody(c.req.raw, deps.bodyLimit), type);
    const events: CacheEvent[] = [];
    const rejected: Rejection[] = [];
    values.forEach((decoded, index) => {
      if (!decoded.ok) {
        rejected.push({ index, field: 'event', error: `events[${index}]: ${decoded.error}` });
        return;
      }
      const converted = toCacheEvent(decoded.value);
      if (converted.ok) events.push(converted.event);
      else rejected.push({ index, field: converted.field, error: `events[${index}].${converted.error}` });
    });
    deps.pipeline.rejected(c.var.project, 'http', rejected.length);
    const result = await deps.pipeline.ingest(c.var.project, events, 'http');
    return c.json({ accepted: result.accepted, duplicates: result.duplicates, rejected });
  });

  const schema = eventsJsonSchema();
  app.get('/v1/events/schema', (c) => c.json(schema as object));
}
