// The events contract's origin fields (agentVersion, traceId, spanId): ids
// checked as hex of their length (else the event is rejected, naming the field), kept in lowercase,
// carried by the break in the REST API; with --trace-link the break page
// links to the trace, values URL-encoded, and without an id it links nowhere.
import { describe, expect, it } from 'vitest';
import { SEED_TOOLS, MINUTE, toWire, tools, turn, usage } from '../core/scenario.js';
import { testApp } from './harness.js';

const TRACE = '4BF92F3577B34DA6A3CE929D0E0E4736';
const SPAN = '00f067aa0ba902b7';

function events(origin: Record<string, string>) {
  return [
    toWire(turn('r1', { sessionId: 'sess/1 ä', usage: usage(48_900, 400) })),
    { ...toWire(turn('r2', { sessionId: 'sess/1 ä', at: MINUTE, tools: tools([...SEED_TOOLS].reverse()), usage: usage(0, 49_300) })), ...origin },
  ];
}

describe('a break\'s origin over HTTP', () => {
  it('refuses an id that is not hex of its length, naming the field, and keeps the rest of the batch', async () => {
    for (const [field, value, digits] of [['traceId', 'abc', 32], ['spanId', `${SPAN}0`, 16], ['traceId', 'g'.repeat(32), 32]] as const) {
      const { post } = testApp();
      const [good, bad] = events({ [field]: value });
      // As every bad event of a batch (docs/events.md): answered in `rejected`, the rest stored.
      const batch = await post({ events: [good, bad] });
      expect(batch.status).toBe(200);
      expect(await batch.json()).toMatchObject({ accepted: 1, rejected: [{ index: 1, field, error: expect.stringContaining(`events[1].${field}: expected ${digits} hex digits`) }] });
    }
  });

  it('keeps version, trace and span on the break, and links the break page to the trace', async () => {
    const { post, get, app } = testApp({ traceLink: 'https://tracer.example/p/{sessionId}/traces/{traceId}?span={spanId}' });
    expect((await post({ events: events({ agentVersion: '2.1.332', traceId: TRACE, spanId: SPAN }) })).status).toBe(200);
    const { body } = await get('/v1/breaks/r2');
    expect(body.break).toMatchObject({ agentVersion: '2.1.332', traceId: TRACE.toLowerCase(), spanId: SPAN });
    const page = await (await app.request('/breaks/r2')).text();
    const link = `https://tracer.example/p/sess%2F1%20%C3%A4/traces/${TRACE.toLowerCase()}?span=${SPAN}`;
    expect(page).toContain(`<a id="trace-link" href="${link}" target="_blank" rel="noopener">Open trace</a>`);
    expect(page).toContain('version <code>2.1.332</code>');
  });

  it('links nowhere without a trace, or without --trace-link', async () => {
    const bare = testApp({ traceLink: 'http://jaeger:16686/trace/{traceId}' });
    expect((await bare.post({ events: events({}) })).status).toBe(200);
    expect(await (await bare.app.request('/breaks/r2')).text()).not.toContain('trace-link');
    const spanOnly = testApp({ traceLink: 'http://jaeger:16686/trace/{traceId}' });
    expect((await spanOnly.post({ events: events({ spanId: SPAN }) })).status).toBe(200);
    expect(await (await spanOnly.app.request('/breaks/r2')).text()).not.toContain('trace-link');
    const off = testApp();
    expect((await off.post({ events: events({ traceId: TRACE }) })).status).toBe(200);
    expect(await (await off.app.request('/breaks/r2')).text()).not.toContain('trace-link');
  });
});
