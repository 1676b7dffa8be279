// Reading the text of a JSON object cut short: every cut position of a body
// gives exactly the members and leading elements that are whole before it.
import { describe, expect, it } from 'vitest';
import { readCutObject } from '../../src/core/snapshot/cut.js';

const BODY = {
  model: 'claude-sonnet-4-5',
  n: 12345,
  flag: true,
  messages: [
    { role: 'user', content: 'a "quoted" } ] { [ text \\ with \u00e9 and \ud83d\ude00' },
    { role: 'assistant', content: [{ type: 'text', text: 'b' }] },
    { role: 'user', content: 'c' },
  ],
  system: [{ type: 'text', text: 'sys' }],
  tools: [{ name: 't1' }, { name: 't2' }],
  tail: null,
};

describe('readCutObject', () => {
  it('keeps, at every cut, the members and array elements whose text is whole, and nothing else', () => {
    const text = JSON.stringify(BODY);
    for (let at = 1; at < text.length; at++) {
      const cut = text.slice(0, at);
      const read = readCutObject(cut);
      expect(read, `cut at ${at}`).toBeDefined();
      // Each kept member is the original value, and a member is kept iff its text (and what ends it) is in the cut.
      for (const [key, value] of Object.entries(read!.members)) expect(value).toEqual(BODY[key as keyof typeof BODY]);
      for (const key of Object.keys(BODY)) {
        const end = text.indexOf(JSON.stringify(key)) + JSON.stringify(key).length + 1 + JSON.stringify(BODY[key as keyof typeof BODY]).length;
        // A string, object or array ends with its closing character; a number or literal only when something follows.
        const closed = typeof BODY[key as keyof typeof BODY] === 'object' || typeof BODY[key as keyof typeof BODY] === 'string';
        const scalar = BODY[key as keyof typeof BODY] === null || !closed;
        expect(Object.hasOwn(read!.members, key), `${key} at ${at}`).toBe(scalar ? end < at : end <= at);
      }
      if (read!.cut?.elements) {
        const list = BODY[read!.cut.key as 'messages' | 'tools'];
        expect(read!.cut.elements).toEqual(list.slice(0, read!.cut.elements.length));
        // The next element was not whole.
        const next = list[read!.cut.elements.length];
        if (next !== undefined) expect(cut.includes(JSON.stringify(next) + (list.at(-1) === next ? ']' : ','))).toBe(false);
      }
    }
  });

  it('refuses text that is not the start of a JSON object', () => {
    expect(readCutObject('[1,2')).toBeUndefined();
    expect(readCutObject('{"a":1]')).toBeUndefined();
    expect(readCutObject('{"a":1}x')).toBeUndefined();
    expect(readCutObject('{"a":[1 2')).toBeUndefined();
    expect(readCutObject('{"a":tru,"b"')).toBeUndefined();
  });

  it('keeps a "__proto__" member as a member', () => {
    const read = readCutObject('{"__proto__":{"x":1},"model":"m","tools":[');
    expect(Object.getPrototypeOf(read!.members)).toBe(Object.prototype);
    expect(Object.keys(read!.members)).toEqual(['__proto__', 'model']);
    expect(read!.cut).toEqual({ key: 'tools', elements: [] });
  });
});
