// Where `import` sends its batches: straight into a database through the
// Pipeline, or to a running server's POST /v1/events. Both answer per batch
// with counts and the file line of each rejected event.
import type { DetectionOptions } from '../core/options.js';
import type { CacheEvent } from '../core/types.js';
import { CachebreakError } from '../errors.js';
import { decodeNdjson } from '../ingest/http/decode.js';
import { toCacheEvent } from '../ingest/http/events.js';
import { openLocal } from './local.js';
import { shownDb } from '../store/open.js';
import type { NumberedLine } from './ndjson-input.js';
import { isRefusal, keyHeaders, refusalMessage } from './server-key.js';

export interface LineRejection {
  line: number;
  error: string;
}

export interface BatchResult {
  accepted: number;
  duplicates: number;
  rejected: LineRejection[];
}

export interface Sink {
  /** "./cachebreak.db (project default)" or the server's URL. */
  target: string;
  send(batch: readonly NumberedLine[]): Promise<BatchResult>;
  close(): Promise<void>;
}

/** The import cannot go on (database or server unusable); what was sent so far stays. */
export class ImportStopped extends Error {}

/**
 * Errors name a position within the batch ("line 3: …", "events[2].ts: …", once
 * per problem: "events[2].ts: required; events[2].model: required"); the
 * file's line number replaces it in the summary.
 */
function withoutPosition(error: string): string {
  return error.replace(/(^|; )events\[\d+\](?:\.|: )/g, '$1').replace(/^line \d+: /, '');
}

function allRejected(batch: readonly NumberedLine[], error: string): BatchResult {
  return { accepted: 0, duplicates: 0, rejected: batch.map(({ line }) => ({ line, error })) };
}

function batchText(batch: readonly NumberedLine[]): string {
  return batch.map((l) => l.text).join('\n');
}

export async function databaseSink(path: string, project: string, detection: DetectionOptions, stderr: (text: string) => void): Promise<Sink> {
  let db: Awaited<ReturnType<typeof openLocal>>;
  try {
    db = await openLocal(path, project, 'import', detection);
  } catch (error) {
    throw new ImportStopped(`cannot open the database ${shownDb(path)}: ${(error as Error).message}`);
  }
  let upToDate: Promise<void> | undefined;
  return {
    target: `${shownDb(path)} (project ${project})`,
    async send(batch) {
      await (upToDate ??= db.bringUpToDate(stderr));
      let decoded: ReturnType<typeof decodeNdjson>;
      try {
        decoded = decodeNdjson(batchText(batch));
      } catch (error) {
        // Every line of the batch is unparseable: the decoder gives up on the whole body.
        if (error instanceof CachebreakError) return allRejected(batch, error.message);
        throw error;
      }
      const events: CacheEvent[] = [];
      /** The line of each event. */
      const lines: number[] = [];
      const rejected: LineRejection[] = [];
      decoded.forEach((value, i) => {
        const line = batch[i]!.line;
        const converted = value.ok ? toCacheEvent(value.value) : { ok: false as const, error: withoutPosition(value.error) };
        if (converted.ok) {
          events.push(converted.event);
          lines.push(line);
        } else rejected.push({ line, error: converted.error });
      });
      try {
        const result = await db.ingest(events);
        for (const r of result.rejected ?? []) rejected.push({ line: lines[r.event]!, error: `${r.field}: ${r.problem}` });
        rejected.sort((a, b) => a.line - b.line);
        return { accepted: result.accepted, duplicates: result.duplicates, rejected };
      } catch (error) {
        if (error instanceof CachebreakError) throw new ImportStopped(`${error.message}; ${error.hint}`);
        throw error;
      }
    },
    close: () => db.close(),
  };
}

interface ServerAnswer {
  accepted?: number;
  duplicates?: number;
  rejected?: { index: number; error: string }[];
  error?: { code?: string; message?: string; hint?: string };
}

/** `key`: sent as a bearer token ('' sends none). */
export function serverSink(server: string, key: string): Sink {
  const url = `${server}/v1/events`;
  return {
    target: server,
    async send(batch) {
      let response: Response;
      try {
        response = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/x-ndjson', ...keyHeaders(key) },
          body: batchText(batch),
        });
      } catch (error) {
        const cause = (error as { cause?: Error }).cause?.message ?? (error as Error).message;
        throw new ImportStopped(`cannot reach ${server}: ${cause}`);
      }
      const answer = (await response.json().catch(() => ({}))) as ServerAnswer;
      if (response.ok) {
        return {
          accepted: answer.accepted ?? 0,
          duplicates: answer.duplicates ?? 0,
          rejected: (answer.rejected ?? []).map((r) => ({ line: batch[r.index]?.line ?? 0, error: withoutPosition(r.error) })),
        };
      }
      if (isRefusal(response.status)) throw new ImportStopped(refusalMessage(url, response.status, answer, key));
      if (response.status === 400 && answer.error?.code === 'invalid_body') {
        return allRejected(batch, answer.error.message ?? 'not valid JSON');
      }
      const detail = answer.error ? `${answer.error.message}; ${answer.error.hint}` : response.statusText;
      const advice = response.status === 413 ? ' (lower --batch)' : '';
      throw new ImportStopped(`${url} answered ${response.status}: ${detail}${advice}`);
    },
    close: async () => {},
  };
}
