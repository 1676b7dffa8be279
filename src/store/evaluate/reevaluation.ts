// Re-evaluation in steps, whatever the store: every stream again, about
// STEP_TURNS turns per transaction, so that a commit stays short and the
// process can log between steps.
import type { ReevaluationResult } from '../store.js';
import type { Changes } from './apply.js';

const STEP_TURNS = 20_000;

/** Evaluates `streams` (in order) again through `step`, one transaction per call; returns the totals. */
export async function reevaluateInSteps(
  streams: readonly { id: number; turns: number }[],
  step: (streamIds: number[]) => Changes | Promise<Changes>,
  progress?: (done: number, total: number) => void,
): Promise<ReevaluationResult> {
  let breaksChanged = 0;
  let done = 0;
  while (done < streams.length) {
    const ids: number[] = [];
    let turns = 0;
    while (done + ids.length < streams.length && (ids.length === 0 || turns < STEP_TURNS)) {
      const row = streams[done + ids.length]!;
      ids.push(row.id);
      turns += row.turns;
    }
    const outcome = await step(ids);
    breaksChanged += outcome.breaks.length + outcome.revisedBreaks.length + outcome.droppedBreaks;
    done += ids.length;
    progress?.(done, streams.length);
    await new Promise((resolve) => setImmediate(resolve));
  }
  return { streams: streams.length, breaksChanged };
}
