// An event stream's long line is read in time proportional to its length:
// an 8 MiB line arriving in 16 KiB chunks takes about 8 times what a 1 MiB
// line takes, not 64 (re-reading the unfinished line at every chunk made a
// 15 MiB line take a minute through the proxy).
import { describe, expect, it } from 'vitest';
import { UsageText } from '../../src/core/sse.js';

const CHUNK = 16 * 1024;
const MiB = 1024 ** 2;

/** Reads one data line of `size` characters, then a usage event; milliseconds taken, and what was read. */
function readLongLine(size: number): { ms: number; read: unknown } {
  const text = new UsageText(true, 32 * MiB);
  const chunk = 'x'.repeat(CHUNK);
  const started = performance.now();
  text.push('data: ');
  for (let sent = 0; sent < size; sent += CHUNK) text.push(chunk);
  text.push('\n\ndata: {"type":"message_delta","usage":{"output_tokens":3}}\r');
  text.push('\n\r\n');
  const read = text.end();
  return { ms: performance.now() - started, read };
}

/** The fastest of `runs` readings: the least disturbed by other work on the machine. */
function fastest(size: number, runs: number): number {
  let best = Infinity;
  for (let run = 0; run < runs; run++) best = Math.min(best, readLongLine(size).ms);
  return best;
}

describe('event stream lines', () => {
  it('reads a long line in linear time: 8 MiB costs far less than 64 times 1 MiB', () => {
    readLongLine(MiB); // warm up
    const small = fastest(MiB, 5);
    const large = fastest(8 * MiB, 3);
    // Linear: about 8. Quadratic: about 64. The bound leaves room for a noisy machine.
    expect(large / Math.max(small, 0.5)).toBeLessThan(24);
  });

  it('still reads the event after the long line, across a CRLF split between chunks', () => {
    expect(readLongLine(MiB).read).toEqual([{ type: 'message_delta', usage: { output_tokens: 3 } }]);
  });

  it('counts a long line against the limit while it is unfinished, and frees it when the line ends', () => {
    const text = new UsageText(true, 100);
    text.push(`data: ${'y'.repeat(80)}`);
    text.push('\n\n');
    // The first event ended: its 86 characters are no longer held.
    text.push(`data: {"usage":{"output_tokens":1}}${' '.repeat(50)}\n\n`);
    expect(text.failure).toBeUndefined();
    text.push('z'.repeat(60));
    text.push('z'.repeat(60));
    expect(text.failure).toMatch(/more than 100 characters/);
  });
});
