import { describe, expect, it } from 'vitest';
import { byCodePoint, canonicalJson, hashContent, hashString } from '../../src/core/hash.js';

describe('hashing', () => {
  it('writes canonical JSON: keys by code point, no whitespace, undefined dropped', () => {
    expect(canonicalJson({ b: 1, a: [true, null, 'x'], c: undefined })).toBe('{"a":[true,null,"x"],"b":1}');
    expect(canonicalJson([undefined, { z: { y: 1, x: 2 } }])).toBe('[null,{"z":{"x":2,"y":1}}]');
    expect(canonicalJson('é')).toBe('"é"');
    // U+FF5E sorts before U+1F600 by code point, after it by UTF-16 unit.
    expect(canonicalJson({ '\u{1F600}': 1, '\uFF5E': 2 })).toBe('{"\uFF5E":2,"\u{1F600}":1}');
    expect(['\u{1F600}', '\uFF5E', 'a'].sort(byCodePoint)).toEqual(['a', '\uFF5E', '\u{1F600}']);
  });

  it('is xxh64 as 16 lowercase hex digits', () => {
    expect(hashString('')).toBe('ef46db3751d8e999');
    expect(hashString('abc')).toMatch(/^[0-9a-f]{16}$/);
  });

  it('ignores key order and cache_control at any depth, and nothing else', () => {
    const tool = { name: 'shell', input_schema: { type: 'object', properties: { cmd: { type: 'string' } } } };
    const marked = { input_schema: tool.input_schema, name: 'shell', cache_control: { type: 'ephemeral', ttl: '1h' } };
    expect(hashContent(marked)).toBe(hashContent(tool));
    expect(hashContent([{ type: 'text', text: 'hi', cache_control: { type: 'ephemeral' } }])).toBe(
      hashContent([{ type: 'text', text: 'hi' }]),
    );
    expect(hashContent({ ...tool, description: 'Runs a command.' })).not.toBe(hashContent(tool));
  });
});
