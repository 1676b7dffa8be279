// cachebreak/detector: the server's detection (SPEC §3, §4 v2), in the
// harness's own process. Pure: no node: modules, runs in browsers and edge
// runtimes; its only dependency is xxhash-wasm.
export { completedEvent, Detector, type CompletedRequest, type DetectorOptions, type DetectorStats } from './detector.js';
export { snapshotFromRequest, usageFromResponse, UsageError, type RequestProvider, type SnapshotFromRequestOptions } from './requests.js';
export { SnapshotError } from '../core/snapshot/index.js';
export { breakLine, defaultEmitter, logfmtEmitter, otelEmitter, BREAK_EVENT_NAME, type BreakEmitter, type OtelLogger } from './emit.js';
export { withCachebreak, type CachebreakFetch, type ModelCall, type WithCachebreakOptions } from './fetch.js';
export { RULES_VERSION } from '../core/stream.js';
export { toWireEvent, type WireEvent } from '../core/wire.js';
export type { ModelPrice, PriceLookup } from '../core/prices.js';
export type { DetectionOptions } from '../core/options.js';
export type {
  BreakCause,
  BreakReason,
  BreakRecord,
  CacheControl,
  CacheEvent,
  Evaluation,
  SnapshotContent,
  SnapshotEvent,
  ToolChanges,
  ToolRef,
  TurnEvent,
  TurnState,
  Usage,
  UsageEvent,
} from '../core/types.js';
