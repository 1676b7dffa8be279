// `cachebreak demo`: the stored workload, read back through the Store, shows
// every break reason and the expected state, with subagents in their own
// streams; the same seed and clock always give the same events.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { demoWorkload } from '../../src/cli/demo/workload.js';
import { SERVICE_DETECTION } from '../../src/prices/index.js';
import { BREAK_REASONS, type BreakRecord } from '../../src/core/types.js';
import { SqliteStore } from '../../src/store/sqlite/store.js';
import type { TurnView } from '../../src/store/store.js';
import { tempDir } from '../helpers.js';
import { cli, NOW } from './run.js';

const DAY = 86_400_000;

async function readBack(db: string) {
  const store = new SqliteStore(db, SERVICE_DETECTION);
  try {
    const breaks: BreakRecord[] = [];
    let cursor: string | undefined;
    do {
      const page = await store.breaks('default', {}, {}, cursor ? { limit: 500, cursor } : { limit: 500 });
      breaks.push(...page.items);
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    const sessions = (await store.sessions('default', {}, {}, { limit: 1000 })).items;
    const turns = new Map<string, TurnView[]>();
    for (const s of sessions) turns.set(s.sessionId, (await store.sessionTurns('default', s.sessionId))!);
    return { breaks, sessions, turns };
  } finally {
    await store.close();
  }
}

describe('cachebreak demo', () => {
  it('stores a day in which every break reason, and the expected state, occurs', async () => {
    const db = join(tempDir(), 'demo.db');
    const { code, stdout } = await cli(['demo', '--db', db]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/Wrote the demo workload \(seed 1\) into .*demo\.db, project default:/);
    expect(stdout).toContain(`cachebreak report --db ${db}`);
    expect(stdout).toContain(`cachebreak serve --db ${db}`);
    expect(stdout).toContain("curl -s 'http://127.0.0.1:4318/v1/breaks?limit=5'");

    const { breaks, sessions, turns } = await readBack(db);
    expect(new Set(breaks.map((b) => b.reason))).toEqual(new Set(BREAK_REASONS));
    const evictions = breaks.filter((b) => b.reason === 'likely_provider_ttl_or_eviction');
    // OpenAI's window (5 min to 1 h) leaves a coffee break a possible expiry.
    expect(new Set(evictions.map((b) => b.cause))).toEqual(new Set(['ttl_expired', 'possible_ttl_expiry', 'likely_server_eviction']));
    expect(breaks.some((b) => b.reason === 'request_params_changed' && b.changedParams.includes('thinking'))).toBe(true);
    expect(breaks.some((b) => b.reason === 'breakpoint_lookback_exceeded')).toBe(true);
    expect(breaks.some((b) => b.reason === 'unknown' && b.cause === 'ttl_expired')).toBe(true);
    expect(breaks.some((b) => b.ttlSource === 'declared' && b.ttlMs === 3_600_000 && b.cause === 'ttl_expired')).toBe(true);
    expect(breaks.filter((b) => b.reason === 'tools_schema_changed').length).toBeGreaterThanOrEqual(3);
    expect(breaks.find((b) => b.reason === 'tools_order_changed')?.changedToolNames.every((n) => n.startsWith('mcp__'))).toBe(true);
    expect(breaks.some((b) => b.reason === 'system_changed' && b.changedSystemBlocks?.[0] === 1)).toBe(true);
    expect(breaks.some((b) => b.reason === 'messages_rewritten' && b.firstChangedMessageIndex !== null)).toBe(true);

    const states = new Set([...turns.values()].flat().map((t) => t.state));
    expect(states).toEqual(new Set(['cold', 'hit', 'miss', 'expected', 'unreported']));
    expect([...turns.values()].flat().find((t) => t.state === 'expected')?.expectMiss).toBe('compaction');

    expect(sessions.length).toBeGreaterThanOrEqual(10);
    const providers = new Set([...turns.values()].flat().map((t) => t.provider));
    expect(providers).toEqual(new Set(['anthropic', 'openai', 'gemini', 'deepseek', 'dashscope', 'openrouter']));
    for (const s of sessions) {
      expect(s.firstSeen).toBeGreaterThanOrEqual(NOW - DAY);
      expect(s.lastSeen).toBeLessThanOrEqual(NOW);
    }
  });

  it('puts subagents in their own streams, interleaved in time, never compared with the main agent', async () => {
    const db = join(tempDir(), 'demo.db');
    await cli(['demo', '--db', db]);
    const { breaks, sessions, turns } = await readBack(db);
    const withSubagents = sessions.filter((s) => s.agentIds.length > 2);
    expect(withSubagents.length).toBeGreaterThan(0);
    for (const session of withSubagents) {
      const subagents = turns.get(session.sessionId)!.filter((t) => t.agentId !== 'main');
      // Side by side: the sequence of agent ids changes more often than the number of subagents.
      const switches = subagents.filter((t, i) => i > 0 && t.agentId !== subagents[i - 1]!.agentId).length;
      expect(switches).toBeGreaterThan(new Set(subagents.map((t) => t.agentId)).size);
    }
    const agentOf = new Map([...turns.values()].flat().map((t) => [t.requestId, t.agentId]));
    for (const record of breaks) expect(agentOf.get(record.previousRequestId)).toBe(record.agentId);
  });

  it('is a function of its seed and clock', () => {
    const one = demoWorkload({ seed: 42, now: NOW });
    expect(demoWorkload({ seed: 42, now: NOW })).toEqual(one);
    expect(demoWorkload({ seed: 43, now: NOW })).not.toEqual(one);
    const turns = new Set(one.map((e) => e.requestId)).size;
    expect(turns).toBeGreaterThan(1000);
    expect(turns).toBeLessThan(5000);
    for (const event of one) {
      expect(event.ts).toBeGreaterThanOrEqual(NOW - DAY);
      expect(event.ts).toBeLessThanOrEqual(NOW);
    }
  });

  it('writes nothing new when run again with the same seed, and says so', async () => {
    const db = join(tempDir(), 'demo.db');
    await cli(['demo', '--db', db, '--seed', '9']);
    const again = await cli(['demo', '--db', db, '--seed', '9'], { now: NOW + 3_600_000 });
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`${db} already holds the demo for seed 9 (project default): nothing new was written.`);
  });

  it('lists itself and its options in --help', async () => {
    const overview = await cli(['--help']);
    expect(overview.stdout).toMatch(/^ {2}demo +Write a day of synthetic/m);
    expect(overview.stdout).toMatch(/^ {2}import +/m);
    expect(overview.stdout).toMatch(/^ {2}report +/m);
    const help = await cli(['demo', '--help']);
    expect(help.stdout).toMatch(/--seed N +Seed of the demo workload.*\[CACHEBREAK_SEED; default 1\]/);
    const badSeed = await cli(['demo', '--seed', 'x']);
    expect(badSeed.code).toBe(2);
  });
});
