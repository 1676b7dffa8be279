// The insights' section of `cachebreak report`: what to change, and what it
// would have saved (docs/insights.md). Dollars say "unpriced" rather than $0.
import type { Priced } from '../core/insights/money.js';
import type { Insights } from '../insights/index.js';
import { count, percent, plural } from './format.js';
import { cost, table } from './report-table.js';

const money = (p: Priced) => cost(p.usd, p.unpriced);
/** What a negative saving is: a cost. */
const signed = (usd: number | null) => (usd === null ? 'unknown price' : usd >= 0 ? `saves ${cost(usd, 0)}` : `costs ${cost(-usd, 0)}`);

export function insightLines(insights: Insights): string[] {
  const { avoidable, volatile, fanOut, ttl, chronic, agreement } = insights;
  const lines = ['', 'What to change (docs/insights.md)'];

  const fixes = avoidable.fixes.filter((f) => f.breaks > 0);
  lines.push(
    '',
    avoidable.breaks === 0
      ? 'Avoidable breaks: none'
      : `Avoidable breaks: ${plural(avoidable.breaks, 'break')}, ${count(avoidable.missedCacheReadTokens)} missed tokens, ${money(avoidable.savings)} that the fixes would have saved`,
  );
  for (const f of fixes) {
    lines.push(...table([[f.fix, plural(f.breaks, 'break'), money(f.savings), f.involved.slice(0, 4).map((i) => i.name).join(', ')]], '  ', 1));
    lines.push(`    ${f.advice}`);
  }

  if (volatile.length > 0) {
    lines.push('', 'Volatile prompt parts, by the re-write cost of their breaks');
    lines.push(...table(volatile.map((p) => [p.name, plural(p.breaks, 'break'), plural(p.sessions, 'session'), plural(p.days, 'day'), money(p.cost)])));
  }

  lines.push(
    '',
    fanOut.fanOutCount === 0
      ? 'Fan-out cold starts: none'
      : `Fan-out cold starts: ${plural(fanOut.fanOutCount, 'fan-out')}, ${count(fanOut.writtenAgainTokens)} tokens written more than once, ${money(fanOut.cost)}`,
  );
  if (fanOut.fanOutCount > 0) {
    lines.push(...table(fanOut.fanOuts.map((f) => [new Date(f.ts).toISOString(), f.model, plural(f.turns, 'request'), `${count(f.writtenAgainTokens)} again`, money(f.cost)]), '  ', 2));
    lines.push(`    ${fanOut.advice}`);
  }

  lines.push('', `TTL advice: ${ttl.changeCount === 0 ? 'every stream writes at the cheaper tier' : `${plural(ttl.changeCount, 'stream')} would have saved ${cost(ttl.adviceSavesUsd, 0)} at the other tier`}`);
  if (ttl.groups.length > 0) {
    lines.push(
      ...table(
        ttl.groups.map((g) => [
          `${g.sessionId} ${g.agentId}`,
          g.model,
          `${count(g.gaps.within_5m)} ≤5m, ${count(g.gaps.within_1h)} ≤1h, ${count(g.gaps.over_1h)} >1h`,
          `${g.currentTier} → ${g.advisedTier}`,
          `1h ${signed(g.oneHourSavesUsd)}`,
        ]),
        '  ',
        4,
      ),
    );
  }

  lines.push('', chronic.length === 0 ? 'Chronic misses: none' : `Chronic misses: ${plural(chronic.length, 'stream')} that rarely read`);
  if (chronic.length > 0) {
    lines.push(...table(chronic.map((s) => [`${s.sessionId} ${s.agentId}`, s.cause, `${percent(s.cacheRate)} cached`, `${count(s.unreadTokens)} not read`]), '  ', 2));
    for (const cause of new Set(chronic.map((s) => s.cause))) lines.push(`    ${cause}: ${chronic.find((s) => s.cause === cause)!.advice}`);
  }

  const disagreeing = (['harness', 'provider'] as const).flatMap((side) => agreement[side].filter((c) => !c.agrees).map((c) => ({ side, ...c })));
  if (agreement.harness.length + agreement.provider.length > 0) {
    lines.push('', `Verdicts that differ from cachebreak's: ${plural(disagreeing.reduce((n, c) => n + c.breaks, 0), 'break')}`);
    lines.push(...table(disagreeing.map((c) => [c.side, `${c.cachebreak} ≠ ${c.other}`, plural(c.breaks, 'break'), c.disagreeing.slice(0, 3).join(', ')]), '  ', 2));
  }
  return lines;
}
