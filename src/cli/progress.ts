// A one-line progress bar on stderr, redrawn in place, only on a terminal:
// piped or captured output gets the summary and nothing else.
import type { Io } from './command.js';

/** At most ten redraws a second: a terminal repaint costs more than a batch. */
const REDRAW_MS = 100;
const WIDTH = 24;

export interface Progress {
  /** `done` out of the total; the bar redraws when enough time has passed. */
  update(done: number): void;
  /** Erases the bar so the summary starts on a clean line. */
  finish(): void;
}

const NO_PROGRESS: Progress = { update: () => {}, finish: () => {} };

export function progressBar(io: Io, label: string, total: number, unit: string): Progress {
  if (!io.interactive) return NO_PROGRESS;
  let last = -Infinity;
  let drawn = false;
  return {
    update(done) {
      const now = performance.now();
      if (now - last < REDRAW_MS && done < total) return;
      last = now;
      drawn = true;
      const share = total > 0 ? Math.min(1, done / total) : 1;
      const filled = Math.round(share * WIDTH);
      const bar = '#'.repeat(filled) + '-'.repeat(WIDTH - filled);
      io.stderr(`\r${label} [${bar}] ${done.toLocaleString('en-US')}/${total.toLocaleString('en-US')} ${unit} ${Math.floor(share * 100)}%\x1b[K`);
    },
    finish() {
      if (drawn) io.stderr('\r\x1b[K');
    },
  };
}
