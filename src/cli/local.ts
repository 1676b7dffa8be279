// A database opened by a command that writes it directly (import, demo, tail):
// the same Pipeline as the server's receivers, without a server around it.
import type { DetectionOptions } from '../core/options.js';
import { Pipeline, type BreakSubscriber, type Receiver } from '../ingest/pipeline.js';
import { COMMAND_PG_POOL, openStore } from '../store/open.js';
import type { BatchCounts, Store } from '../store/store.js';
import { Counters } from '../telemetry/counters.js';
import { reevaluateLogged } from '../reevaluation.js';
import { createLogger } from '../telemetry/logfmt.js';

export interface LocalDatabase {
  /** For receivers that need more than events (tail: checkpoints and harness-reported breaks). */
  pipeline: Pipeline;
  store: Store;
  ingest(events: Parameters<Pipeline['ingest']>[1]): Promise<BatchCounts>;
  onBreak(subscriber: BreakSubscriber): void;
  /** Whether the database already holds this session. */
  hasSession(sessionId: string): Promise<boolean>;
  /** Evaluates the stored turns again when an older version's rules judged them, with progress on `stderr`. */
  bringUpToDate(stderr: (text: string) => void): Promise<void>;
  close(): Promise<void>;
}

export async function openLocal(path: string, project: string, receiver: Receiver, detection: DetectionOptions): Promise<LocalDatabase> {
  const store = await openStore(path, detection, { pgPool: COMMAND_PG_POOL, sqlite: { backgroundCheckpoint: true, mustWrite: true } });
  // A command reports what it wrote in its summary; one log line per break
  // would bury that summary.
  const pipeline = new Pipeline(store, new Counters(), createLogger(() => {}));
  return {
    pipeline,
    store,
    ingest: (events) => pipeline.ingest(project, events, receiver),
    onBreak: (subscriber) => pipeline.subscribe(subscriber),
    hasSession: async (sessionId) => (await store.sessionTurns(project, sessionId)) !== null,
    bringUpToDate: async (stderr) => {
      if (await store.needsReevaluation()) await reevaluateLogged(store, createLogger(stderr), 'the database was written under older detection rules');
    },
    close: () => store.close(),
  };
}
