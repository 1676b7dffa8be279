// `cachebreak report` over the demo workload in a real database: text for
// people, a stable JSON document for machines, and a clear answer when
// there is nothing to report on.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BREAK_REASONS } from '../../src/core/types.js';
import type { Report } from '../../src/cli/report-data.js';
import { mixedWorkload, PRICED_COST_USD, UNREPORTED_INPUT, WAITING_USAGE } from '../e2e/mixed-workload.js';
import { tempDir } from '../helpers.js';
import { cli, NOW } from './run.js';

// One demo database for the whole file (tempDir() is emptied after each test).
const DIR = mkdtempSync(join(tmpdir(), 'cachebreak-report-'));
const DB = join(DIR, 'demo.db');

beforeAll(async () => {
  const demo = await cli(['demo', '--db', DB, '--seed', '7']);
  expect(demo.code).toBe(0);
});
afterAll(() => rmSync(DIR, { recursive: true, force: true }));

describe('cachebreak report', () => {
  it('summarises cache rate, breaks by reason, changed tools and the worst sessions', async () => {
    const { code, stdout, stderr } = await cli(['report', '--db', DB]);
    expect(code).toBe(0);
    expect(stderr).toBe('');
    expect(stdout).toContain(`cachebreak report: ${DB} (project default, all time)`);
    expect(stdout).toMatch(/Cache rate +\d+\.\d%/);
    for (const reason of BREAK_REASONS) expect(stdout).toMatch(new RegExp(`^  ${reason} +\\d+ +\\d+\\.\\d%$`, 'm'));
    const tools = stdout.slice(stdout.indexOf('Top changed tools'), stdout.indexOf('Worst sessions'));
    expect(tools).toMatch(/mcp__github__\w+ +\d+ breaks?/);
    expect(stdout).toMatch(/Worst sessions by cache rate\n  support-bot-\w+ +0\.0% cached/);
    expect(stdout).toContain('Worst sessions by extra cost');
  });

  it('prints a stable JSON document with --json', async () => {
    const { code, stdout } = await cli(['report', '--db', DB, '--json']);
    expect(code).toBe(0);
    const report = JSON.parse(stdout) as Report;
    expect(Object.keys(report)).toEqual([
      'database',
      'project',
      'from',
      'to',
      'sessions',
      'turns',
      'breaks',
      'cacheRate',
      'missedCacheReadTokens',
      'estimatedExtraCostUsd',
      'unpricedBreaks',
      'tokens',
      'unreportedInputTokens',
      'waitingUsage',
      'breaksByReason',
      'topChangedTools',
      'worstSessions',
      'agreement',
      'harnessReports',
      'insights',
    ]);
    expect(Object.keys(report.insights)).toEqual(['avoidable', 'volatile', 'fanOut', 'ttl', 'chronic', 'agreement']);
    expect(report.cacheRate).toBeGreaterThan(0);
    expect(report.cacheRate).toBeLessThan(1);
    expect(report.sessions).toBeGreaterThanOrEqual(10);
    expect(report.breaksByReason.map((r) => r.reason)).toEqual([...BREAK_REASONS]);
    for (const row of report.breaksByReason) expect(row.breaks).toBeGreaterThan(0);
    expect(report.breaksByReason.reduce((sum, r) => sum + r.breaks, 0)).toBe(report.breaks);
    expect(report.topChangedTools.some((t) => t.name.startsWith('mcp__'))).toBe(true);
    expect(report.tokens.write1h).toBeGreaterThan(0);
    expect(report.estimatedExtraCostUsd).toBeGreaterThan(0);
    expect(report.worstSessions.byCacheRate[0]?.sessionId).toMatch(/^support-bot-/);
    expect(report.worstSessions.byExtraCost.length).toBeGreaterThan(0);
  });

  it('reads only the given time range and project', async () => {
    const lastHour = await cli(['report', '--db', DB, '--json', '--from', new Date(NOW - 3_600_000).toISOString(), '--to', String(NOW)]);
    const recent = JSON.parse(lastHour.stdout) as Report;
    const all = JSON.parse((await cli(['report', '--db', DB, '--json'])).stdout) as Report;
    expect(recent.from).toBe('2026-11-30T11:00:00.000Z');
    expect(recent.turns).toBeGreaterThan(0);
    expect(recent.turns).toBeLessThan(all.turns);

    const other = await cli(['report', '--db', DB, '--project', 'elsewhere']);
    expect(other.code).toBe(0);
    expect(other.stdout).toContain('No turns recorded here yet.');
    const empty = JSON.parse((await cli(['report', '--db', DB, '--project', 'elsewhere', '--json'])).stdout) as Report;
    expect(empty).toMatchObject({ turns: 0, sessions: 0, cacheRate: null });
  });

  it('says "no data" for a cache rate it cannot measure, never 0%', async () => {
    const db = join(tempDir(), 'cb.db');
    const unreported = JSON.stringify({
      type: 'turn', requestId: 'r1', sessionId: 's', ts: NOW - 60_000, provider: 'openrouter', model: 'm',
      uncachedInputTokens: 5000, outputTokens: 10,
    });
    expect((await cli(['import', '--db', db, '-'], { stdin: unreported })).code).toBe(0);
    const { stdout } = await cli(['report', '--db', db]);
    expect(stdout).toMatch(/Cache rate +no data/);
    expect(stdout).not.toContain('0.0%');
  });

  it('shows the cost of priced breaks and the count of unpriced ones, never $0.00 for an unknown price', async () => {
    const db = join(tempDir(), 'cb.db');
    const events = mixedWorkload(NOW - 3_600_000);
    const ndjson = (list: unknown[]) => list.map((e) => JSON.stringify(e)).join('\n');
    expect((await cli(['import', '--db', db, '-'], { stdin: ndjson([...events, WAITING_USAGE]) })).code).toBe(0);
    const { stdout } = await cli(['report', '--db', db]);
    expect(stdout).toMatch(/^Extra cost +\$0\.17 \+ 2 unpriced \(estimated\)$/m);
    expect(stdout).toMatch(/Worst sessions by extra cost\n  sess_priced +\d+\.\d% cached +5 turns +1 break +\$0\.17\n\n?/);
    expect(stdout).not.toMatch(/\$0\.00\b/);
    // The rate's own figures, and the input it leaves out apart.
    expect(stdout).toMatch(/^  input, cache not reported +12,000$/m);
    expect(stdout).toContain('\n1 usage record waits for its snapshot or session: in no figure above until it joins\n');

    const report = JSON.parse((await cli(['report', '--db', db, '--json'])).stdout) as Report;
    expect(report).toMatchObject({ breaks: 3, estimatedExtraCostUsd: PRICED_COST_USD, unpricedBreaks: 2, unreportedInputTokens: UNREPORTED_INPUT, waitingUsage: 1 });
    expect(report.cacheRate).toBe(report.tokens.read / (report.tokens.uncached + report.tokens.read + report.tokens.write));
    // Sessions whose breaks all lack a price have no cost to rank by.
    expect(report.worstSessions.byExtraCost.map((s) => [s.sessionId, s.estimatedExtraCostUsd, s.unpricedBreaks])).toEqual([['sess_priced', PRICED_COST_USD, 0]]);
    expect(report.worstSessions.byCacheRate.find((s) => s.sessionId === 'sess_unpriced')).toMatchObject({ estimatedExtraCostUsd: null, unpricedBreaks: 2 });
    expect((await cli(['report', '--db', db])).stdout).toMatch(/^  sess_unpriced +0\.0% cached +3 turns +2 breaks +unknown \(2 unpriced\)$/m);

    const onlyUnpriced = join(tempDir(), 'unpriced.db');
    const unpriced = events.filter((e) => e.sessionId === 'sess_unpriced');
    expect((await cli(['import', '--db', onlyUnpriced, '-'], { stdin: ndjson(unpriced) })).code).toBe(0);
    const text = (await cli(['report', '--db', onlyUnpriced])).stdout;
    expect(text).toMatch(/^Extra cost +unknown \(2 unpriced\)$/m);
    expect(text).not.toContain('$');
    expect(text).not.toContain('cache not reported');
    expect(text).not.toContain('waiting');
    expect(JSON.parse((await cli(['report', '--db', onlyUnpriced, '--json'])).stdout)).toMatchObject({ estimatedExtraCostUsd: null, unpricedBreaks: 2, waitingUsage: 0 });
  });

  it('exits 1 without creating anything when there is no database', async () => {
    const db = join(tempDir(), 'missing.db');
    const { code, stdout, stderr } = await cli(['report', '--db', db]);
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toBe(`cachebreak report: no database at ${db}; run \`cachebreak demo\` or point --db at one\n`);
    expect(existsSync(db)).toBe(false);
  });

  it('exits 1 when the file is not a database', async () => {
    const file = join(tempDir(), 'notes.txt');
    writeFileSync(file, 'not a database, just text that is long enough to have a header'.repeat(20));
    const { code, stderr } = await cli(['report', '--db', file]);
    expect(code).toBe(1);
    expect(stderr).toContain(`cachebreak report: cannot read ${file} as a cachebreak database: ${file} is not a SQLite database (file is not a database)`);
  });

  it('rejects a bad time or an empty range as a usage error', async () => {
    const bad = await cli(['report', '--db', DB, '--from', 'yesterday']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--from: expected RFC 3339 or epoch milliseconds, got "yesterday"');
    const backwards = await cli(['report', '--db', DB, '--from', String(NOW), '--to', String(NOW - 1)]);
    expect(backwards.code).toBe(2);
    expect(backwards.stderr).toContain('--from: must be earlier than --to');
  });
});
