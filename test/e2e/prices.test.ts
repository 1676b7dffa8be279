// --prices extends the built-in price table in a real server: a model it adds
// gets an estimated extra cost on its breaks, and a built-in model keeps its
// built-in price.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_PRICES, findPrice } from '../../src/core/prices.js';
import { tempDir } from '../helpers.js';
import { breaksOf } from './api.js';
import { SEED_STEPS, seedBreak, seedSession } from './events.js';
import { postEvents, startServer } from './server.js';

const MODEL = 'acme-coder-2';

describe('--prices against a real server', () => {
  it('prices a model it adds, and leaves the built-in ones as they were', async () => {
    // Without the file the model has no price, and its break no cost.
    expect(findPrice(DEFAULT_PRICES, MODEL)).toBeUndefined();
    const file = join(tempDir(), 'prices.json');
    // A prefix key, as the built-in table has; write1hMultiplier is left to its default.
    writeFileSync(file, JSON.stringify({ 'acme-coder': { inputUsdPerMTok: 10, readMultiplier: 0.2, write5mMultiplier: 1.5 } }));
    const server = await startServer({ args: ['--prices', file] });

    // The seed session twice: on the built-in Sonnet price, and (request ids
    // of its own) on the added model.
    const steps = SEED_STEPS.map((step) => ({ ...step, requestId: `x_${step.requestId}` }));
    const acme = seedSession('sess_X', steps).map((e) => (e.type === 'snapshot' ? { ...e, model: MODEL } : e));
    const reply = await postEvents(server.url, [...seedSession(), ...acme]);
    expect(reply.body).toEqual({ accepted: 16, duplicates: 0, rejected: [] });

    const breaks = await breaksOf(server.url);
    expect(breaks).toEqual([
      {
        ...seedBreak('sess_X'),
        requestId: 'x_req_03',
        previousRequestId: 'x_req_02',
        model: MODEL,
        // 48,900 tokens written at 1.5× instead of read at 0.2×, $10 per MTok.
        estimatedExtraCostUsd: 0.6357,
      },
      // Unchanged: 48,900 × (1.25 − 0.1) × $3 per MTok.
      seedBreak(),
    ]);
  });
});
