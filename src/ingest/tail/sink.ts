// The tailer's sink inside one process: batches go through the Pipeline
// (the one way in), each with its checkpoint in the same transaction.
import type { Pipeline } from '../pipeline.js';
import type { Store } from '../../store/store.js';
import type { TailSink } from './tailer.js';

export function pipelineSink(pipeline: Pipeline, store: Pick<Store, 'tailCheckpoints' | 'forgetTailCheckpoints'>, project: string): TailSink {
  return {
    write: (batch) =>
      pipeline.ingest(project, batch.events, 'tail', batch.tokenPoints, { externalBreaks: batch.externalBreaks, checkpoint: batch.checkpoint }),
    checkpoints: () => store.tailCheckpoints(project),
    forget: (fileIds) => store.forgetTailCheckpoints(project, fileIds),
  };
}
