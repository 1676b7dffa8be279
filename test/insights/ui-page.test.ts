// GET /insights in the web UI, in-process on crafted workloads: every insight
// with its figures, each break and stream one click away.
import { describe, expect, it } from 'vitest';
import { NOW, testApp } from '../serve/harness.js';
import { agreementWorkload, chronicWorkload } from './workloads.js';

describe('the insights page', () => {
  it('shows each insight, links the disagreeing break and the chronic stream, and escapes nothing it should not', async () => {
    const { store, app } = testApp();
    const { events, externalBreaks } = agreementWorkload();
    await store.write([
      { project: 'default', events, externalBreaks },
      { project: 'default', events: chronicWorkload().map((e) => ({ ...e, requestId: `c-${e.requestId}`, sessionId: `c-${e.sessionId}<b>`, ts: e.ts! + 3_600_000 })) },
    ]);
    const response = await app.request(`/insights?from=${NOW - 86_400_000}&to=${NOW}`);
    expect(response.status).toBe(200);
    const page = await response.text();
    for (const id of ['avoidable', 'volatile', 'fanout', 'ttl', 'chronic', 'confusion']) expect(page).toContain(`id="${id}-summary"`);
    // o2, d2, d3, r2, e2 and sess_clock's four: with the clock, system:0 changes five times (9 × $0.168705);
    // and sess_lookback's four breakpoints 30 blocks on (4 × $0.138).
    expect(page).toContain('13 breaks a known fix would have prevented: $2.07 saved');
    expect(page).toContain('<a href="/breaks/d3?from=');
    expect(page).toContain('<a href="/breaks/m2?from=');
    // Names wrap after their underscores: the text without the break opportunities.
    expect(page.replaceAll('<wbr>', '')).toContain('leading_volatile_block');
    expect(page).toContain('<a href="/sessions/c-sess_clock%3Cb%3E?from=');
    expect(page).not.toContain('sess_clock<b>');
    expect(page).toMatch(/<nav>.*<a href="\/insights[^"]*" aria-current="page">Insights<\/a>.*<\/nav>/);
    expect((await app.request('/insights?from=yesterday')).status).toBe(400);
  });
});
