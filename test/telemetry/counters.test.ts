import { describe, expect, it } from 'vitest';
import { Counters } from '../../src/telemetry/counters.js';

const turn = (counters: Counters, project: string, model: string, n = 1) => {
  counters.inc('turns', { project, model, provider: 'p', state: 'hit' }, n);
  counters.inc('tokens', { project, model, provider: 'p', kind: 'cache_read' }, 100 * n);
};

/** name → model → value, of one project. */
function byModel(counters: Counters, project: string): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const s of counters.samples()) {
    if (s.labels.project !== project) continue;
    (out[s.name] ??= {})[s.labels.model!] = ((out[s.name] ??= {})[s.labels.model!] ?? 0) + s.value;
  }
  return out;
}

describe('Counters: models with series of their own', () => {
  it('keeps the first N models of each project, counts the rest as "other", and loses no count', () => {
    const counters = new Counters(2);
    for (const model of ['a', 'b', 'c', 'd']) turn(counters, 'one', model);
    turn(counters, 'two', 'c');
    expect(byModel(counters, 'one')).toEqual({ turns: { a: 1, b: 1, other: 2 }, tokens: { a: 100, b: 100, other: 200 } });
    expect(counters.get('turns', { project: 'one', model: 'other', provider: 'other', state: 'hit' })).toBe(2);
    // Each project has its own N.
    expect(byModel(counters, 'two')).toEqual({ turns: { c: 1 }, tokens: { c: 100 } });
    // Labels without a model are untouched.
    counters.inc('events', { project: 'one', receiver: 'http', outcome: 'accepted' }, 3);
    expect(counters.get('events', { project: 'one', receiver: 'http', outcome: 'accepted' })).toBe(3);
  });

  it('promotes a model once it has more turns than the least used kept one, folding that one into "other"; no series goes down', () => {
    const counters = new Counters(2);
    turn(counters, 'p', 'a', 5);
    turn(counters, 'p', 'b', 1);
    turn(counters, 'p', 'c', 1);
    expect(byModel(counters, 'p').turns).toEqual({ a: 5, b: 1, other: 1 });
    // c now has 2 turns, more than b's 1: c gets its own series from here on, b goes to "other".
    turn(counters, 'p', 'c', 1);
    expect(byModel(counters, 'p').turns).toEqual({ a: 5, c: 1, other: 2 });
    expect(byModel(counters, 'p').tokens).toEqual({ a: 500, c: 100, other: 200 });
    // Many one-turn models pass through "other" without displacing the used ones.
    for (let i = 0; i < 100; i++) turn(counters, 'p', `m${i}`);
    expect(Object.keys(byModel(counters, 'p').turns!).sort()).toEqual(['a', 'c', 'other']);
    expect(byModel(counters, 'p').turns).toEqual({ a: 5, c: 1, other: 102 });
  });
});
