// GET /insights: what to change, and what it would have saved, over the
// range (docs/insights.md): avoidable breaks, volatile prompt parts, fan-out
// cold starts, TTL advice, chronic misses, and the verdicts that differ from
// cachebreak's. Breaks link to their break page, streams to their session.
import type { Hono } from 'hono';
import type { AppEnv, ReadDeps } from '../../app.js';
import type { Priced } from '../../core/insights/money.js';
import { readInsights, type Insights } from '../../insights/index.js';
import { insightPrices } from '../../insights/prices.js';
import { cost, count, html, Html, nameList, percent, unbroken, usd, when, wrappable } from './html.js';
import { layout } from './layout.js';
import { linkTo, uiRangeOf, type UiRange } from './range.js';

const money = (p: Priced) => cost(p.usd, p.unpriced);

/** A titled list; `cards` lays its rows out as labelled cards on a narrow screen (its cells carry data-label). */
function section(id: string, title: string, summary: Html | string, rows: Html[], head: Html, note = '', cards = false): Html {
  const table = rows.length === 0 ? '' : html`<div class="scroll"><table id="${id}"${cards ? html` class="cards"` : ''}><thead><tr>${head}</tr></thead><tbody>${rows}</tbody></table></div>`;
  return html`<h2>${title}</h2><p class="muted" id="${id}-summary">${summary}</p>${table}${note === '' ? '' : html`<p class="muted">${note}</p>`}`;
}

function body(insights: Insights, range: UiRange): Html {
  const breakLink = (id: string) => html`<a href="${linkTo(`/breaks/${encodeURIComponent(id)}`, range)}"><code>${id}</code></a>`;
  const sessionLink = (id: string, agent: string) => html`<a href="${linkTo(`/sessions/${encodeURIComponent(id)}`, range)}"><code>${wrappable(id)}</code></a> ${unbroken(agent)}`;
  const { avoidable, volatile, fanOut, ttl, chronic, agreement } = insights;
  const th = (...names: string[]) => html`${names.map((n) => (n.startsWith('#') ? html`<th class="n">${n.slice(1)}</th>` : html`<th>${n}</th>`))}`;

  const fixes = avoidable.fixes.filter((f) => f.breaks > 0);
  const avoidableHtml = section(
    'avoidable',
    'Avoidable breaks',
    avoidable.breaks === 0 ? 'No break in this range that a known fix would have prevented.' : `${count(avoidable.breaks)} breaks a known fix would have prevented: ${money(avoidable.savings)} saved, ${count(avoidable.missedCacheReadTokens)} missed tokens read instead.`,
    fixes.map((f) => html`<tr><td><code>${wrappable(f.fix)}</code><br><span class="muted">${f.advice}</span></td><td class="n">${count(f.breaks)}</td><td class="n">${money(f.savings)}</td><td><code>${nameList(f.involved.slice(0, 6).map((i) => i.name))}</code></td><td>${f.examples.slice(0, 3).map((id) => html`${breakLink(id)} `)}</td></tr>`),
    th('fix', '#breaks', '#would have saved', 'involved', 'breaks'),
  );
  const volatileHtml = section(
    'volatile',
    'Volatile prompt parts',
    volatile.length === 0 ? 'No tool or system block changed in this range.' : 'System blocks and tools whose changes broke the cache, by the re-write cost of those breaks.',
    volatile.map((p) => html`<tr><td><code>${wrappable(p.name)}</code></td><td class="n">${count(p.breaks)}</td><td class="n">${count(p.sessions)}</td><td class="n">${count(p.days)}</td><td class="n">${money(p.cost)}</td><td>${breakLink(p.latestRequestId)}</td></tr>`),
    th('part', '#breaks', '#sessions', '#days', '#re-write cost', 'latest'),
  );
  const fanOutHtml = section(
    'fanout',
    'Fan-out cold starts',
    fanOut.fanOutCount === 0 ? 'No requests started side by side with one prefix.' : `${count(fanOut.fanOutCount)} fan-outs wrote ${count(fanOut.writtenAgainTokens)} tokens more than once: ${money(fanOut.cost)}.`,
    fanOut.fanOuts.map((f) => html`<tr><td>${when(f.ts)}</td><td><code>${wrappable(f.model)}</code></td><td class="n">${count(f.turns)}</td><td class="n">${count(f.writtenAgainTokens)}</td><td class="n">${money(f.cost)}</td><td>${f.requestIds.slice(0, 4).map((id) => html`<code>${id}</code> `)}</td></tr>`),
    th('started', 'model', '#requests', '#written again', '#cost', 'requests'),
    fanOut.fanOutCount === 0 ? '' : fanOut.advice,
  );
  const ttlHtml = section(
    'ttl',
    'TTL advice',
    ttl.changeCount === 0 ? 'Every stream here writes at the cheaper cache tier.' : `${count(ttl.changeCount)} streams would have saved ${usd(ttl.adviceSavesUsd)} at the other tier.`,
    ttl.groups.map(
      (g) =>
        html`<tr><td>${sessionLink(g.sessionId, g.agentId)}</td><td><code>${wrappable(g.model)}</code></td><td class="n" data-label="gaps ≤ 5 min">${count(g.gaps.within_5m)}</td><td class="n" data-label="≤ 1 h">${count(g.gaps.within_1h)}</td><td class="n" data-label="> 1 h">${count(g.gaps.over_1h)}</td><td data-label="tier">${unbroken(`${g.currentTier} → ${g.advisedTier}`)}</td><td class="n" data-label="1 h instead of 5 min">${g.oneHourSavesUsd === null ? 'unknown price' : g.oneHourSavesUsd >= 0 ? `saves ${usd(g.oneHourSavesUsd)}` : `costs ${usd(-g.oneHourSavesUsd)}`}</td></tr>`,
    ),
    th('stream', 'model', '#gaps ≤ 5 min', '#≤ 1 h', '#> 1 h', 'tier', '#1 h instead of 5 min'),
    '',
    true,
  );
  const chronicHtml = section(
    'chronic',
    'Chronic misses',
    chronic.length === 0 ? 'No stream that rarely reads its cache.' : 'Streams that rarely read their cache, with the likely cause from their snapshots.',
    chronic.map((s) => html`<tr><td>${sessionLink(s.sessionId, s.agentId)}</td><td class="n">${count(s.turns)}</td><td class="n">${percent(s.cacheRate)}</td><td class="n">${count(s.unreadTokens)}</td><td><code>${wrappable(s.cause)}</code><br><span class="muted">${s.advice}</span></td></tr>`),
    th('stream', '#turns', '#cache rate', '#not read', 'likely cause'),
  );
  const cells = (['harness', 'provider'] as const).flatMap((side) => agreement[side].map((c) => ({ side, ...c })));
  const agreementHtml = section(
    'confusion',
    'Other verdicts',
    cells.length === 0 ? 'Neither the harness nor the provider gave a verdict on a break in this range.' : "cachebreak's verdict against the harness's report and the provider's diagnosis; the cells that differ link to their breaks.",
    cells.map((c) => html`<tr><td>${c.side}</td><td><code>${wrappable(c.cachebreak)}</code></td><td><code>${wrappable(c.other)}</code></td><td class="n">${count(c.breaks)}</td><td>${c.agrees ? 'agrees' : html`${c.disagreeing.map((id) => html`${breakLink(id)} `)}`}</td></tr>`),
    th('side', 'cachebreak', 'theirs', '#breaks', 'differs on'),
  );
  return html`<p class="muted">What to change, and what it would have saved. Definitions: docs/insights.md; each list also at <a href="/v1">/v1/insights/…</a>.</p>
${avoidableHtml}${volatileHtml}${fanOutHtml}${ttlHtml}${chronicHtml}${agreementHtml}`;
}

export function registerInsightsPage(app: Hono<AppEnv>, deps: ReadDeps): void {
  app.get('/insights', async (c) => {
    const range = uiRangeOf(c, deps.now());
    const insights = await readInsights(deps.store, insightPrices(deps.prices), c.var.project, { from: range.from, to: range.to });
    const view = layout({ title: 'Insights', path: '/insights', section: 'insights', range, project: c.var.project, body: body(insights, range) });
    return c.html(view.text, 200, { 'cache-control': 'no-store' });
  });
}
