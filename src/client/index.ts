// cachebreak/client: a batching sender for a harness to POST its events to a
// cachebreak server (SPEC §2).
export { CachebreakClient, retryAfterMs, type ClientFailure, type ClientOptions, type ClientStats, type WireEvent } from './client.js';
export { toWireEvent, wireUsage } from '../core/wire.js';
