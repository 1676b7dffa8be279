// Turns whose snapshots describe the same prefix share one stored prefix
// object (their own message hashes aside): the stream tails the writer keeps
// for tens of thousands of streams then hold ids' worth of memory, not a copy
// of every event's tool list.
import { describe, expect, it } from 'vitest';
import { toPrefix } from '../../src/core/prefix.js';
import { Dictionary } from '../../src/store/sqlite/dictionary.js';
import { SEED_TOOLS, tools } from '../core/scenario.js';
import { freshStore } from '../helpers.js';

/** A snapshot's prefix as a fresh event gives it: new objects every time. */
const fromEvent = (messageHashes?: string[]) =>
  toPrefix({ model: 'claude-sonnet-4-5', systemHash: 's1', tools: tools(SEED_TOOLS), ...(messageHashes ? { messageHashes } : {}) });

describe('interned prefixes', () => {
  it('are one object per distinct prefix, with each turn keeping its own message hashes', () => {
    const dictionary = new Dictionary(freshStore().sqlite);
    const a = dictionary.intern(fromEvent());
    const b = dictionary.intern(fromEvent());
    expect(b).toBe(a);
    const withMessages = dictionary.intern(fromEvent(['m1', 'm2']));
    expect(withMessages.tools).toBe(a.tools);
    expect(withMessages.messageHashes).toEqual(['m1', 'm2']);
    expect(dictionary.prefix(withMessages)).toBe(dictionary.prefix(fromEvent()));
    const other = dictionary.intern(toPrefix({ model: 'claude-sonnet-4-5', systemHash: 's2', tools: tools(SEED_TOOLS) }));
    expect(other).not.toBe(a);
    expect(dictionary.prefix(other)).not.toBe(dictionary.prefix(a));
  });
});
