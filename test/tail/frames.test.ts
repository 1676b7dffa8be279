// The framers find exactly the complete units whatever the bytes arrive in:
// random splits of lines and of pretty-printed objects (as the OTel file
// exporters write them) give the same units as the whole text.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Framer } from '../../src/ingest/tail/frames/frame.js';
import { lineFramer } from '../../src/ingest/tail/frames/lines.js';
import { objectFramer } from '../../src/ingest/tail/frames/objects.js';

interface Unit {
  kind: string;
  text: string;
  line: number;
}

/**
 * Feeds `text` in pieces cut at `cuts`, as the file tailer does: complete
 * units are consumed, the rest stays and grows. Returns every frame found.
 */
function frames(framer: Framer, text: string, cuts: number[] = [], previous?: number): Unit[] {
  const bytes = Buffer.from(text);
  const ends = [...new Set([...cuts.map((c) => c % (bytes.length + 1)), bytes.length])].sort((a, b) => a - b);
  if (previous !== undefined) framer.resync(previous);
  const out: Unit[] = [];
  let carry = Buffer.alloc(0);
  let line = 1;
  let at = 0;
  for (const end of ends) {
    carry = Buffer.concat([carry, bytes.subarray(at, end)]);
    at = end;
    let pos = 0;
    for (let f = framer.next(carry, pos); f; f = framer.next(carry, pos)) {
      out.push({ kind: f.kind, text: carry.toString('utf8', f.start, f.end), line: line + f.linesBefore });
      line += f.lines;
      pos = f.next;
    }
    carry = carry.subarray(pos);
  }
  return out;
}

const units = (list: Unit[]) => list.filter((u) => u.kind === 'unit');

/** Objects the way the harnesses dump them, with the strings that trip naive scanners. */
const dumps = [
  { name: 'a', attributes: { text: 'braces { and } and [ ] inside', quote: 'say "hi"\\', nested: { deep: [1, { x: '}' }] } } },
  { hrTime: [1796032800, 5000000], _body: 'line\nbreak escaped', resource: { _rawAttributes: [['service.name', 'qwen-code']] } },
  { empty: {}, list: [], unicode: 'é ✓ 🧪' },
];
const prettyText = dumps.map((d) => JSON.stringify(d, null, 2) + '\n').join('');

describe('lineFramer', () => {
  const text = 'first\r\nsecond\n\nfourth\n';
  it('finds each complete line, without its CR, numbered', () => {
    expect(frames(lineFramer(), text + 'partial')).toEqual([
      { kind: 'unit', text: 'first', line: 1 },
      { kind: 'unit', text: 'second', line: 2 },
      { kind: 'unit', text: '', line: 3 },
      { kind: 'unit', text: 'fourth', line: 4 },
    ]);
  });

  it('gives the same lines however the bytes are split', () => {
    const whole = frames(lineFramer(), text);
    fc.assert(fc.property(fc.array(fc.nat(), { maxLength: 12 }), (cuts) => {
        expect(frames(lineFramer(), text, cuts)).toEqual(whole);
      }));
  });

  it('after a start mid-line, skips the rest of that line only', () => {
    expect(units(frames(lineFramer(), 'tail of a line\nnext\n', [], 0x61))).toEqual([{ kind: 'unit', text: 'next', line: 2 }]);
    expect(units(frames(lineFramer(), 'whole\n', [], 0x0a))).toEqual([{ kind: 'unit', text: 'whole', line: 1 }]);
  });
});

describe('objectFramer', () => {
  it('finds each pretty-printed object, numbered by the line it starts on', () => {
    const found = frames(objectFramer(), prettyText);
    expect(found.map((u) => JSON.parse(u.text) as unknown)).toEqual(dumps);
    expect(found.map((u) => u.line)).toEqual([1, 1 + JSON.stringify(dumps[0], null, 2).split('\n').length, expect.any(Number)]);
  });

  it('gives the same objects however the bytes are split, even inside strings and escapes', () => {
    const whole = frames(objectFramer(), prettyText);
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 40 }), (cuts) => {
        expect(frames(objectFramer(), prettyText, cuts)).toEqual(whole);
      }),
      { numRuns: 300 },
    );
  });

  it('reads compact objects, one per line, too', () => {
    const compact = dumps.map((d) => JSON.stringify(d)).join('\n') + '\n';
    expect(units(frames(objectFramer(), compact)).map((u) => JSON.parse(u.text) as unknown)).toEqual(dumps);
  });

  it('waits for an object that is not complete yet', () => {
    const half = prettyText.slice(0, prettyText.indexOf('"hrTime"'));
    expect(units(frames(objectFramer(), half))).toHaveLength(1);
  });

  it('gives up an object cut short by its writer at the next object, and reports text that is no object', () => {
    const cut = JSON.stringify(dumps[0], null, 2).slice(0, 40);
    const found = frames(objectFramer(), `${cut}\n${JSON.stringify(dumps[2], null, 2)}\nnot json\n${JSON.stringify(dumps[1])}\n`);
    expect(found.map((u) => [u.kind, u.line])).toEqual([
      ['bad', 1],
      ['unit', cut.split('\n').length + 1],
      ['bad', expect.any(Number)],
      ['unit', expect.any(Number)],
    ]);
    expect(JSON.parse(found[1]!.text)).toEqual(dumps[2]);
    expect(found[2]!.text).toBe('not json');
    expect(JSON.parse(found[3]!.text)).toEqual(dumps[1]);
  });

  it('after a start mid-object, skips to the next object that opens a line', () => {
    const start = prettyText.indexOf('"nested"');
    const found = frames(objectFramer(), prettyText.slice(start), [], 0x20);
    expect(units(found).map((u) => JSON.parse(u.text) as unknown)).toEqual(dumps.slice(1));
    expect(found[0]!.kind).toBe('skip');
  });
});
