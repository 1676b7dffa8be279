// Evaluating stored data again: on start when it was computed under older
// detection rules (SPEC §4 v1 → v2), or on demand with new options.
import type { ReevaluationResult, Store } from './store/store.js';
import type { Logger } from './telemetry/logfmt.js';

/** How often progress is logged, at most. */
const PROGRESS_EVERY_MS = 2_000;

/** Evaluates every stream again, logging progress and the outcome; `why` says what asked for it. */
export async function reevaluateLogged(store: Store, log: Logger, why: string): Promise<ReevaluationResult> {
  const started = Date.now();
  let logged = started;
  log.info('reevaluation_started', { why });
  const result = await store.reevaluate((done, total) => {
    const now = Date.now();
    if (now - logged < PROGRESS_EVERY_MS && done < total) return;
    logged = now;
    log.info('reevaluation_progress', { streams: done, of: total, percent: Math.floor((100 * done) / Math.max(1, total)) });
  });
  log.info('reevaluation_done', { streams: result.streams, breaksChanged: result.breaksChanged, ms: Date.now() - started });
  return result;
}
