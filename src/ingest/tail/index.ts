// The file receiver: follows telemetry files, debug logs and NDJSON event
// files, and hands what it reads to the pipeline with its checkpoints.
export { Tailer, type TailOptions, type TailReport, type TailSink, type TailTotals } from './tailer.js';
export { TailStopped, type TailBatch } from './file.js';
export type { Format } from './formats/index.js';
export { pipelineSink } from './sink.js';
