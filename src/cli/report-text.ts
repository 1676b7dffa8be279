// The terminal rendering of a Report: aligned, sections in reading order,
// cache rates that say "no data" rather than 0%, costs that say "unpriced"
// rather than $0.00.
import { count, percent, plural } from './format.js';
import type { Report, ReportSession } from './report-data.js';
import { insightLines } from './report-insights.js';
import { cost, table } from './report-table.js';

function scope(report: Report): string {
  const range =
    report.from === null && report.to === null ? 'all time' : `${report.from ?? 'the beginning'} to ${report.to ?? 'now'}`;
  return `project ${report.project}, ${range}`;
}

function sessionRows(sessions: readonly ReportSession[]): string[] {
  return table(
    sessions.map((s) => [
      s.sessionId,
      `${percent(s.cacheRate)} cached`,
      plural(s.turns, 'turn'),
      plural(s.breaks, 'break'),
      cost(s.estimatedExtraCostUsd, s.unpricedBreaks),
    ]),
  );
}

/** The harness's and the provider's verdicts beside cachebreak's, when either gave any. */
function verdictLines(report: Report): string[] {
  const { harness, provider, reasons, rows } = report.agreement;
  if (harness.compared + provider.compared + harness.unjoinedReports === 0) return [];
  const rate = (side: { compared: number; agreed: number; rate: number | null }) => [`agreed on ${count(side.agreed)} of ${plural(side.compared, 'break')}`, percent(side.rate)];
  const lines = [
    '',
    'Other verdicts on the same breaks',
    ...table([
      ['harness (its own reports)', ...rate(harness)],
      ['provider (Anthropic, OpenAI diagnoses)', ...rate(provider)],
    ], '  ', 2),
  ];
  if (provider.compared > 0 && provider.alone > 0) lines.push(`  (the provider said nothing on ${plural(provider.alone, 'break')}: ours alone, not counted as disagreement)`);
  const side = (s: { compared: number; agreed: number }) => (s.compared === 0 ? '-' : `${count(s.agreed)} of ${count(s.compared)}`);
  lines.push('', ...table([['cachebreak', 'breaks', 'harness agreed', 'provider agreed', 'provider silent'], ...reasons.map((r) => [r.cachebreak, count(r.breaks), side(r.harness), side(r.provider), count(r.provider.alone)])], '  ', 1));
  if (harness.unjoinedReports > 0) lines.push(`  (${plural(harness.unjoinedReports, 'harness report')} matched no break of cachebreak's)`);
  lines.push('', ...table([['cachebreak', 'harness', 'provider', 'breaks'], ...rows.map((r) => [r.cachebreak, r.harness ?? '-', r.provider ?? '-', count(r.breaks)])], '  ', 3));
  if (report.harnessReports.length > 0) {
    lines.push(
      '',
      'Latest breaks the harness reported too',
      ...table(report.harnessReports.map((r) => [r.ts, r.sessionId, r.reason, r.harnessReason, r.agrees ? 'agrees' : 'differs']), '  ', 5),
    );
  }
  return lines;
}

export function renderReport(report: Report): string {
  const lines = [`cachebreak report: ${report.database} (${scope(report)})`, ''];
  if (report.turns === 0) {
    lines.push(
      'No turns recorded here yet.',
      'Run `cachebreak demo` for a sample workload, or send events to `cachebreak serve` (POST /v1/events) or `cachebreak import`.',
    );
    return lines.join('\n') + '\n';
  }
  const t = report.tokens;
  lines.push(
    ...table(
      [
        ['Sessions', count(report.sessions)],
        ['Turns', count(report.turns)],
        ['Breaks', count(report.breaks)],
        ['Cache rate', percent(report.cacheRate)],
        [
          'Extra cost',
          report.estimatedExtraCostUsd === null
            ? cost(null, report.unpricedBreaks)
            : `${cost(report.estimatedExtraCostUsd, report.unpricedBreaks)} (estimated)`,
        ],
        ['Missed reads', `${count(report.missedCacheReadTokens)} tokens`],
      ],
      '',
    ),
    '  (cache rate = read / (uncached + read + write) of the tokens below: cache writes count as input)',
    '',
    'Tokens',
    ...table([
      ['uncached input', count(t.uncached)],
      ['cache read', count(t.read)],
      ['cache write', count(t.write)],
      ['  of which 1h', count(t.write1h)],
      ['output', count(t.output)],
      // Apart from the rate's own figures, so that those reproduce it (SPEC §5).
      ...(report.unreportedInputTokens > 0 ? [['input, cache not reported', count(report.unreportedInputTokens)]] : []),
    ]),
  );
  if (report.unreportedInputTokens > 0) {
    lines.push('  (input of turns whose usage carried no cache field: not in the cache rate)');
  }
  if (report.waitingUsage > 0) {
    const one = report.waitingUsage === 1;
    lines.push(
      '',
      `${plural(report.waitingUsage, 'usage record')} ${one ? 'waits for its' : 'wait for their'} snapshot or session: in no figure above until ${one ? 'it joins' : 'they join'}`,
    );
  }
  const reasons = report.breaksByReason.filter((r) => r.breaks > 0).sort((a, b) => b.breaks - a.breaks);
  if (reasons.length > 0) {
    lines.push('', 'Breaks by reason', ...table(reasons.map((r) => [r.reason, count(r.breaks), percent(r.share)])));
  }
  if (report.topChangedTools.length > 0) {
    lines.push('', 'Top changed tools', ...table(report.topChangedTools.map((tool) => [tool.name, plural(tool.breaks, 'break')])));
  }
  lines.push(...verdictLines(report));
  if (report.worstSessions.byCacheRate.length > 0) {
    lines.push('', 'Worst sessions by cache rate', ...sessionRows(report.worstSessions.byCacheRate));
  }
  if (report.worstSessions.byExtraCost.length > 0) {
    lines.push('', 'Worst sessions by extra cost', ...sessionRows(report.worstSessions.byExtraCost));
  }
  lines.push(...insightLines(report.insights));
  return lines.join('\n') + '\n';
}
