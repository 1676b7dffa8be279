// A harness process for detector-memory.test.ts, run with --expose-gc: the
// heap a Detector holds, measured after a full collection. argv[2]:
// `conversation` (one conversation of 2,000 turns, measured at 1,000 and
// 2,000) or `load` (sessions until 64 MiB of events went through a
// Detector of maxBytes 16 MiB).
import { writeSync } from 'node:fs';
import { Detector } from '../../src/detector/index.js';
import { conversationTurn, loadTurn } from './detector-load.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');
const heap = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};
const report = (value: unknown) => writeSync(1, `${JSON.stringify(value)}\n`);

if (process.argv[2] === 'conversation') {
  const detector = new Detector({ maxTurnsPerStream: 2_000 });
  const start = heap();
  const held: Record<number, number> = {};
  for (let i = 0; i < 2_000; i++) {
    detector.add(conversationTurn(i));
    if (i + 1 === 1_000 || i + 1 === 2_000) held[i + 1] = heap() - start;
  }
  report({ held, bytes: detector.stats.bytes });
} else {
  const maxBytes = 16 * 1024 * 1024;
  const detector = new Detector({ maxBytes });
  const start = heap();
  let peak = 0;
  let most = 0;
  for (let s = 0; s < 400; s++) {
    for (let i = 0; i < 100; i++) detector.add(loadTurn(s, i));
    most = Math.max(most, detector.stats.bytes);
    if (s % 50 === 49) peak = Math.max(peak, heap() - start);
  }
  report({ maxBytes, peak, most, stats: detector.stats });
}
