// GET /v1/breaks/:requestId: a break beside the two prefixes it compares,
// by names and hashes only.
import { describe, expect, it } from 'vitest';
import { hashString } from '../../src/core/hash.js';
import { SEED_TOOLS, tools } from '../core/scenario.js';
import { mixedWorkload } from '../e2e/mixed-workload.js';
import { NOW, storeApp } from './harness.js';

describe('GET /v1/breaks/:requestId', () => {
  it("answers the break with its baseline's and its own tools in the order sent, system blocks, markers and params", async () => {
    const { post, get } = await storeApp();
    await post({ events: mixedWorkload(NOW - 3_600_000) });
    const { status, body } = await get('/v1/breaks/p2');
    expect(status).toBe(200);
    expect(body.break).toMatchObject({ requestId: 'p2', previousRequestId: 'p1', reason: 'tools_order_changed', harness: null });
    expect(body.baseline.tools).toEqual(tools(SEED_TOOLS));
    expect(body.turn.tools).toEqual(tools([...SEED_TOOLS].reverse()));
    expect(body.turn.systemBlockHashes).toEqual([hashString('billing'), hashString('You are a coding agent.')]);
    expect(body.turn.markers).toEqual(expect.arrayContaining(['system:1@5m']));
    expect(Object.keys(body.turn)).toEqual(['model', 'tools', 'systemBlockHashes', 'markers', 'params', 'ttlMs', 'partial']);

    const unpriced = await get('/v1/breaks/u2');
    expect(unpriced.body.baseline.systemBlockHashes[1]).not.toBe(unpriced.body.turn.systemBlockHashes[1]);
    expect(unpriced.body.break.changedSystemBlocks).toEqual([1]);
  });

  it('answers 404 naming the request for a turn that is no break, or none at all; the other break routes still answer', async () => {
    const { post, get } = await storeApp();
    await post({ events: mixedWorkload(NOW - 3_600_000) });
    for (const id of ['p1', 'nope']) {
      const { status, body } = await get(`/v1/breaks/${id}`);
      expect(status).toBe(404);
      expect(body.error.message).toBe(`no break of request "${id}"`);
    }
    expect((await get('/v1/breaks/agreement')).status).toBe(200);
    expect((await get('/v1/breaks/external')).status).toBe(200);
  });
});
