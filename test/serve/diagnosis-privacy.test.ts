// A provider's diagnosis sent with an event keeps only its reason and token
// counts: a key or a word a client filled with content reaches neither the
// database nor the API.
import { describe, expect, it } from 'vitest';
import { hashString } from '../../src/core/hash.js';
import { MINUTE, toWire, turn, usage } from '../core/scenario.js';
import { storeApp } from './harness.js';

const SECRET = 'You are a secret system prompt text';

describe('diagnoses sent with events', () => {
  it('are stored as their reason and counts only', async () => {
    const app = await storeApp();
    const events = [
      toWire(turn('p1', { sessionId: 's', at: 0, usage: usage(48_900, 400) })),
      {
        ...toWire(turn('p2', { sessionId: 's', at: MINUTE, usage: usage(0, 49_300), systemBlockHashes: [hashString('billing'), hashString('edited')] })),
        diagnostics: { cache_miss_reason: { type: 'system_changed', [SECRET]: 1, detail: 'secretword_only', cache_missed_input_tokens: 48_900 } },
      },
    ];
    expect((await app.post({ events })).status).toBe(200);
    const { body } = await app.get('/v1/breaks/p2');
    expect(body.break.providerDiagnosis).toEqual({ diagnostics: { cache_miss_reason: { type: 'system_changed', cache_missed_input_tokens: 48_900 } } });
    const everything = JSON.stringify((await app.get('/v1/breaks?limit=100')).body);
    expect(everything).not.toContain(SECRET);
    expect(everything).not.toContain('secretword_only');
  });
});
