// What a followed file must produce, computed without the tailer: its whole
// text decoded in one go and written straight into another store.
import { toCacheEvent } from '../../src/ingest/http/events.js';
import { createMappingContext, mapTelemetry } from '../../src/ingest/otlp/sources/index.js';
import { telemetryOfDump } from '../../src/ingest/tail/formats/otel-sdk.js';
import { objectFramer } from '../../src/ingest/tail/frames/objects.js';
import type { SqliteStore } from '../../src/store/sqlite/store.js';
import { freshStore } from '../helpers.js';

export async function referenceStore(files: { ndjson?: string[]; outfiles?: string[] }): Promise<SqliteStore> {
  const store = freshStore();
  for (const text of files.ndjson ?? []) {
    const events = text
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => {
        const converted = toCacheEvent(JSON.parse(line));
        if (!converted.ok) throw new Error(converted.error);
        return converted.event;
      });
    await store.write([{ project: 'default', events }]);
  }
  for (const text of files.outfiles ?? []) {
    const bytes = Buffer.from(text);
    const framer = objectFramer();
    const context = createMappingContext();
    for (let f = framer.next(bytes, 0); f; f = framer.next(bytes, f.next)) {
      const mapped = mapTelemetry(telemetryOfDump(JSON.parse(bytes.toString('utf8', f.start, f.end))).telemetry, context);
      await store.write([{ project: 'default', events: mapped.events, tokenPoints: mapped.tokenPoints }]);
    }
  }
  return store;
}
