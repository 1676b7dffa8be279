// The Detector's memory: per conversation linear in its length (each kept
// turn holds only the messages it does not share with the turn before it),
// and in all within maxBytes, the least recently active sessions forgotten
// first. Measured twice: the bytes the detector estimates (stats.bytes) and
// the heap of a child process after a full collection.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { evaluateEvents } from '../../src/core/stream.js';
import type { TurnEvent } from '../../src/core/types.js';
import { Detector } from '../../src/detector/index.js';
import { TEST_OPTIONS, turn, usage } from '../core/scenario.js';
import { conversationTurn, loadTurn, messages } from './detector-load.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CHILD = fileURLToPath(new URL('./detector-memory-child.ts', import.meta.url));
const run = promisify(execFile);

async function measured(mode: 'conversation' | 'load'): Promise<any> {
  const { stdout } = await run(process.execPath, ['--expose-gc', '--import', 'tsx', CHILD, mode], { cwd: ROOT, timeout: 120_000, maxBuffer: 1024 * 1024 });
  return JSON.parse(stdout);
}

const plain = <T extends { writerTiers?: unknown }>({ writerTiers: _, ...rest }: T) => rest;

/** A conversation whose messages grow, with a message rewritten at turn 20 and the conversation compacted at turn 40. */
function rewritten(count: number): TurnEvent[] {
  return Array.from({ length: count }, (_, i) => {
    const hashes = i >= 40 ? messages(2 * (i - 40) + 2, 0) : messages(2 * i + 2, i >= 20 ? 5 : -1);
    const miss = i === 0 || i === 20 || i === 40;
    return turn(`c_${i}`, { at: i * 10_000, messageHashes: hashes, messageBlockCounts: hashes.map((_, j) => 1 + (j % 3)), usage: miss ? usage(0, 50_000) : usage(50_000, 500) });
  });
}

describe('Detector memory', () => {
  it('judges messages kept as shared prefixes as the reference does, folding, out of order and rewritten', () => {
    const events = rewritten(60);
    const reference = new Map(evaluateEvents(events, TEST_OPTIONS).map((e) => [e.requestId, plain(e)]));
    expect([...reference.values()].filter((e) => e.break).map((e) => e.break!.reason)).toContain('messages_rewritten');
    for (const maxTurnsPerStream of [1_000, 5]) {
      const detector = new Detector({ prices: TEST_OPTIONS.prices, maxTurnsPerStream });
      for (const event of events) expect(detector.add(event).find((e) => e.requestId === event.requestId), event.requestId).toEqual(reference.get(event.requestId));
    }
    // Out of order: every other turn arrives after the rest; the last ones judged again equal the reference.
    const detector = new Detector({ prices: TEST_OPTIONS.prices });
    for (const event of events.filter((_, i) => i % 2 === 1)) detector.add(event);
    for (const event of events.filter((_, i) => i % 2 === 0)) detector.add(event);
    for (const event of events) expect(detector.evaluation(event.requestId), event.requestId).toEqual(reference.get(event.requestId));
  });

  it("a 2,000-turn conversation's state grows linearly with its length: estimated and in the heap", { timeout: 120_000 }, async () => {
    const detector = new Detector({ maxTurnsPerStream: 2_000 });
    const bytes: Record<number, number> = {};
    for (let i = 0; i < 2_000; i++) {
      detector.add(conversationTurn(i));
      if (i + 1 === 1_000 || i + 1 === 2_000) bytes[i + 1] = detector.stats.bytes;
    }
    // Twice the turns (and messages): about twice the bytes, where a list per turn is four times.
    expect(bytes[2_000]! / bytes[1_000]!).toBeLessThan(2.5);
    const { held } = await measured('conversation');
    console.log(`2,000-turn conversation: estimated ${bytes[1_000]} → ${bytes[2_000]} bytes, heap ${held[1_000]} → ${held[2_000]} bytes (1,000 → 2,000 turns)`);
    expect(held[2_000] / held[1_000]).toBeLessThan(2.5);
    // 2,000 turns of 4,000 messages kept whole would be 300 MB and more.
    expect(held[2_000]).toBeLessThan(32 * 1024 * 1024);
  });

  it('stays within maxBytes under a bounded load, forgetting the least recently active sessions, counted', { timeout: 120_000 }, async () => {
    const maxBytes = 4 * 1024 * 1024;
    const detector = new Detector({ maxBytes });
    let most = 0;
    for (let s = 0; s < 100; s++) {
      for (let i = 0; i < 50; i++) {
        detector.add(loadTurn(s, i));
        most = Math.max(most, detector.stats.bytes);
      }
    }
    expect(most).toBeLessThanOrEqual(maxBytes);
    expect(detector.stats.sessionsEvicted).toBeGreaterThan(0);
    expect(detector.evaluation('load_99_49')).toBeDefined();
    expect(detector.evaluation('load_0_49')).toBeUndefined();
    // One session larger than maxBytes: its oldest turns are folded away.
    const small = new Detector({ maxBytes: 256 * 1024 });
    for (let i = 0; i < 500; i++) small.add(conversationTurn(i));
    expect(small.stats.bytes).toBeLessThanOrEqual(256 * 1024);
    expect(small.stats.turnsFolded).toBeGreaterThan(0);

    const load = await measured('load');
    console.log(`load: maxBytes ${load.maxBytes}, estimated at most ${load.most}, heap at most ${load.peak} bytes, ${load.stats.sessionsEvicted} sessions forgotten`);
    expect(load.most).toBeLessThanOrEqual(load.maxBytes);
    expect(load.stats.sessionsEvicted).toBeGreaterThan(0);
    // The estimate holds the heap: what is kept stays within the budget, with room for what the estimate leaves out.
    expect(load.peak).toBeLessThan(1.5 * load.maxBytes);
  });
});
