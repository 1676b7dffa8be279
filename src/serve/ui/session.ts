// GET /sessions/:sessionId: a session's turns, stream by stream (one stream
// per agent): read, write and uncached tokens per turn, breaks and expected
// misses (a compaction) marked apart, and each break linking to its break
// page.
import type { Hono } from 'hono';
import type { AppEnv, ReadDeps } from '../../app.js';
import { CachebreakError } from '../../errors.js';
import type { TurnView } from '../../store/store.js';
import { cost, count, html, Html, nameList, utc, when, wrappable } from './html.js';
import { layout, type Chart } from './layout.js';
import { linkTo, uiRangeOf, type UiRange } from './range.js';

const TOKEN_SERIES = [
  { key: 'read', label: 'cache read', color: '#1a7f37' },
  { key: 'write', label: 'cache write', color: '#d4a72c' },
  { key: 'uncached', label: 'uncached', color: '#57606a' },
] as const;

function chartOf(id: string, turns: TurnView[]): Chart {
  return {
    id,
    kind: 'bars',
    stacked: true,
    xLabel: 'turn',
    format: 'count',
    x: turns.map((_, i) => i + 1),
    step: 1,
    series: TOKEN_SERIES.map((s) => ({ label: s.label, color: s.color, values: turns.map((t) => t.usage?.[s.key] ?? null) })),
    marks: turns.flatMap((t, i) => (t.break ? [i + 1] : [])),
    expected: turns.flatMap((t, i) => (t.state === 'expected' ? [i + 1] : [])),
  };
}

function breakList(turns: TurnView[], range: UiRange): Html {
  const breaks = turns.flatMap((t, i) => (t.break ? [{ n: i + 1, b: t.break }] : []));
  if (breaks.length === 0) return html`<p class="muted">No breaks in this stream.</p>`;
  return html`<div class="scroll"><table class="breaks"><thead><tr><th class="n">turn</th><th>time</th><th>reason</th><th>changed tools</th><th class="n">missed tokens</th><th class="n">extra cost</th></tr></thead><tbody>${breaks.map(
    ({ n, b }) =>
      html`<tr><td class="n">${n}</td><td><a href="${linkTo(`/breaks/${encodeURIComponent(b.requestId)}`, range)}">${when(b.ts)}</a></td><td class="reason">${wrappable(b.reason)}</td><td><code>${nameList(b.changedToolNames)}</code></td><td class="n">${count(b.missedCacheReadTokens)}</td><td class="n">${cost(b.estimatedExtraCostUsd)}</td></tr>`,
  )}</tbody></table></div>`;
}

export function registerSessionPage(app: Hono<AppEnv>, deps: ReadDeps): void {
  app.get('/sessions/:sessionId', async (c) => {
    const range = uiRangeOf(c, deps.now());
    const sessionId = c.req.param('sessionId');
    const turns = await deps.store.sessionTurns(c.var.project, sessionId);
    if (!turns) throw new CachebreakError('not_found', `no session "${sessionId.slice(0, 256)}"`, 'see the sessions at /sessions');
    const streams = new Map<string, TurnView[]>();
    for (const turn of turns) streams.set(turn.agentId, [...(streams.get(turn.agentId) ?? []), turn]);
    const charts = [...streams.values()].map((stream, i) => chartOf(`stream-${i}`, stream));
    const body = html`<h2>Session <code>${sessionId}</code></h2>
<p class="muted">${count(turns.length)} turns in ${count(streams.size)} stream${streams.size === 1 ? '' : 's'}, ${utc(turns[0]!.ts)} to ${utc(turns[turns.length - 1]!.ts)}; the whole session, whatever the range. Red lines mark breaks; dashed lines mark expected misses (a compaction, a reset the harness announced), which are no break.</p>
${[...streams.entries()].map(
  ([agentId, stream], i) =>
    html`<section class="stream"><h2>Agent <code>${agentId}</code> <span class="muted">${count(stream.length)} turns</span></h2><div id="stream-${i}" class="chart"></div>${breakList(stream, range)}</section>`,
)}`;
    const view = layout({ title: `Session ${sessionId}`, path: `/sessions/${encodeURIComponent(sessionId)}`, section: 'sessions', range, project: c.var.project, body, charts });
    return c.html(view.text, 200, { 'cache-control': 'no-store' });
  });
}
