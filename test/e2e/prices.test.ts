// --prices in a real server: a model the price database lacks gets an
// estimated extra cost on its breaks from the file, and a model the database
// prices keeps the database's price.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { databasePrices } from '../../src/prices/index.js';
import { tempDir } from '../helpers.js';
import { breaksOf } from './api.js';
import { SEED_STEPS, seedBreak, seedSession } from './events.js';
import { postEvents, startServer } from './server.js';

const MODEL = 'acme-coder-2';

describe('--prices against a real server', () => {
  it('prices a model the database lacks, and leaves the database models as they were', async () => {
    // Without the file the model has no price, and its break no cost.
    expect(databasePrices(MODEL, 'anthropic')).toBeUndefined();
    // The seed's model, at Sonnet 4.5's database prices.
    expect(databasePrices('claude-sonnet-4-5', 'anthropic')).toEqual({ input: 3, cacheRead: 0.3, cacheWrite: 3.75, cacheWrite1h: 6 });
    const file = join(tempDir(), 'prices.json');
    // A prefix key, in the absolute form; cacheWrite1h is left to default to cacheWrite.
    writeFileSync(file, JSON.stringify({ 'acme-coder': { input: 10, cacheRead: 2, cacheWrite: 15 } }));
    const server = await startServer({ args: ['--prices', file] });

    // The seed session twice: on the database's Sonnet price, and (request ids
    // of its own) on the model the file adds.
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
        // Explicit caching, written at 5m: 48,900 × ($15 write − $2 read) per MTok.
        estimatedExtraCostUsd: 0.6357,
      },
      // Unchanged: 48,900 × ($3.75 write − $0.30 read) per MTok.
      { ...seedBreak(), estimatedExtraCostUsd: 0.168705 },
    ]);
  });
});
