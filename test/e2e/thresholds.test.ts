// --min-miss-tokens and --miss-ratio reach detection in a real server: the
// same two-turn session is a miss under one setting and a hit under another.
// The second turn reads 6,000 of the 10,000 tokens the first one cached, so it
// misses 4,000 tokens and reads 60% of what it could have; each server sits
// on one side of one threshold.
import { describe, expect, it } from 'vitest';
import { breaksOf, turnsOf } from './api.js';
import { seedSession } from './events.js';
import { postEvents, startServer } from './server.js';

const SESSION = 'sess_T';
const events = seedSession(SESSION, [
  { requestId: 't_01', at: 0, read: 0, write: 10_000 },
  { requestId: 't_02', at: 5, read: 6_000, write: 4_000 },
]);

/** t_02's state and break reason, as the server detected them. */
async function judged(args: string[]) {
  const server = await startServer({ args });
  const reply = await postEvents(server.url, events);
  expect(reply.body).toEqual({ accepted: 4, duplicates: 0, rejected: [] });
  const [first, second] = await turnsOf(server.url, SESSION);
  expect(first!.state).toBe('cold');
  return { state: second!.state, reason: second!.break?.reason ?? null, breaks: await breaksOf(server.url) };
}

describe('detection thresholds from the command line', () => {
  it('decide whether the same turn is a miss or a hit, each on its own', async () => {
    const [atBoth, overTokens, atRatio] = await Promise.all([
      // 4,000 missed ≥ 4,000, and 6,000 read < 0.61 × 10,000: both criteria hold.
      judged(['--min-miss-tokens', '4000', '--miss-ratio', '0.61']),
      // 4,000 missed < 4,001 (the ratio stays at its default 0.95).
      judged(['--min-miss-tokens', '4001']),
      // 6,000 read is not below 0.6 × 10,000 (the token floor stays at its default 2,000).
      judged(['--miss-ratio', '0.6']),
    ]);
    expect(atBoth).toMatchObject({ state: 'miss', reason: 'likely_provider_ttl_or_eviction' });
    expect(atBoth.breaks).toEqual([
      expect.objectContaining({ requestId: 't_02', expectedCacheReadTokens: 10_000, currentCacheReadTokens: 6_000, missedCacheReadTokens: 4_000 }),
    ]);
    expect(overTokens).toEqual({ state: 'hit', reason: null, breaks: [] });
    expect(atRatio).toEqual({ state: 'hit', reason: null, breaks: [] });
  });
});
