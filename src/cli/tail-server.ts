// `tail --server`: events go to the server's POST /v1/events (as NDJSON, in
// the ingest contract), harness-reported breaks to POST /v1/breaks/external,
// and the checkpoint, once the server has answered, into the local --db.
// A kill between the two resends what the checkpoint did not cover; the
// server stores it once (events by requestId, reports by their identity).
import { wireEvent } from '../ingest/http/wire.js';
import { TailStopped, type TailSink } from '../ingest/tail/index.js';
import type { BatchCounts } from '../store/store.js';
import type { LocalDatabase } from './local.js';
import { isRefusal, keyHeaders, refusalMessage } from './server-key.js';

interface Answer {
  accepted?: number;
  duplicates?: number;
  rejected?: { error: string }[];
  error?: { message?: string; hint?: string };
}

/** A server that cannot take a batch now; the tailer retries, honouring Retry-After. */
class Unavailable extends Error {
  constructor(
    message: string,
    readonly retryAfter?: number,
  ) {
    super(message);
  }
}

/** A missing, unknown or not allowed key (401, 403) stops the tail: retrying would send the same key forever. */
async function post(url: string, type: string, body: string, key: string): Promise<Answer> {
  let response: Response;
  try {
    response = await fetch(url, { method: 'POST', headers: { 'content-type': type, ...keyHeaders(key) }, body, signal: AbortSignal.timeout(30_000) });
  } catch (error) {
    throw new Unavailable(`cannot reach ${url}: ${(error as { cause?: Error }).cause?.message ?? (error as Error).message}`);
  }
  const answer = (await response.json().catch(() => ({}))) as Answer;
  if (isRefusal(response.status)) throw new TailStopped(refusalMessage(url, response.status, answer, key));
  if (!response.ok) {
    const retryAfter = Number(response.headers.get('retry-after') ?? NaN);
    const detail = answer.error ? `${answer.error.message}; ${answer.error.hint}` : response.statusText;
    throw new Unavailable(`${url} answered ${response.status}: ${detail}`, Number.isFinite(retryAfter) ? retryAfter : undefined);
  }
  return answer;
}

/**
 * Whether the server takes this key, asked once at start with an empty batch:
 * a refused key stops the tail at once (TailStopped), not at its first event;
 * a server that cannot be reached yet is tried again with the first batch.
 */
export async function checkServerKey(server: string, key: string): Promise<void> {
  try {
    await post(`${server}/v1/events`, 'application/x-ndjson', '', key);
  } catch (error) {
    if (error instanceof TailStopped) throw error;
  }
}

/** `key`: sent as a bearer token ('' sends none). */
export function serverTailSink(server: string, key: string, local: LocalDatabase, project: string, notice: (message: string) => void): TailSink {
  let warnedTokens = false;
  return {
    async write(batch) {
      const counts: BatchCounts = { accepted: 0, duplicates: 0 };
      if (batch.events.length > 0) {
        const answer = await post(`${server}/v1/events`, 'application/x-ndjson', batch.events.map((e) => JSON.stringify(wireEvent(e))).join('\n'), key);
        counts.accepted = answer.accepted ?? 0;
        counts.duplicates = answer.duplicates ?? 0;
        for (const r of answer.rejected ?? []) notice(`${batch.path}: the server rejected an event: ${r.error}`);
      }
      if (batch.externalBreaks.length > 0) {
        const answer = await post(`${server}/v1/breaks/external`, 'application/json', JSON.stringify({ breaks: batch.externalBreaks }), key);
        counts.externalBreaks = answer.accepted ?? 0;
      }
      if (batch.tokenPoints.length > 0 && !warnedTokens) {
        warnedTokens = true;
        notice(`${batch.path}: token counters from metric batches are stored only with --db (the ingest API has no place for them); they are not sent`);
      }
      await local.pipeline.ingest(project, [], 'tail', [], { checkpoint: batch.checkpoint });
      return counts;
    },
    checkpoints: () => local.store.tailCheckpoints(project),
    forget: (fileIds) => local.store.forgetTailCheckpoints(project, fileIds),
  };
}
