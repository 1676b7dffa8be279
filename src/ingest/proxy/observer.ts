// Observing a proxied call (parsing its body, hashing it into a snapshot,
// naming its stream) happens in a thread of its own: the main thread only
// forwards bytes, so a large request body never holds up the chunks of the
// answers streaming through it. One thread, so observations come back in the
// order the calls ended, and the stream lineage (identity.ts) lives there.
// If the thread dies, a new one starts (pool.ts); the calls it held are
// counted as not observed, and lineage starts afresh as after a restart.
import { ThreadPool } from '../../threads/pool.js';
import type { Limits } from '../limits.js';
import type { Call, Observation } from './observe.js';

/** A call to observe, for the project its key names. */
export interface ObserveRequest {
  project: string;
  call: Call;
}

export interface ObserverData {
  limits: Limits;
  bodyLimit: number;
}

export type Observer = ThreadPool<ObserveRequest, Observation>;

export function startObserver(data: ObserverData, stderr: (line: string) => void): Promise<Observer> {
  return ThreadPool.start({ name: 'observer', module: new URL('./observer-thread', import.meta.url), count: 1, workerData: data }, stderr);
}
