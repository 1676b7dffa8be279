// The alerts evaluated over a real store (SQLite, and PostgreSQL in the
// `postgres` project): a break reason the project had days before is known,
// one it never had fires and resolves once its breaks leave the window; the
// cache rate and cost rules read the window's rollups alone.
import { describe, expect, it } from 'vitest';
import { Alerts, type Alert } from '../../src/alerts/alerts.js';
import type { AlertRules } from '../../src/alerts/rules.js';
import { hashString } from '../../src/core/hash.js';
import type { CacheEvent } from '../../src/core/types.js';
import { createLogger } from '../../src/telemetry/logfmt.js';
import { MINUTE, SEED_TOOLS, T0, tools, turn, usage } from '../core/scenario.js';
import { storeUnderTest } from '../store-under-test.js';

const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const FEWER_TOOLS = tools(['read_file', 'shell']);

/** A session on `day`: a cold start, a hit, then a break of its own (`change`). */
function session(id: string, day: number, change: Partial<CacheEvent>): CacheEvent[] {
  const at = (minutes: number) => day * DAY + minutes * MINUTE;
  return [
    turn(`${id}-1`, { sessionId: id, at: at(0), usage: usage(0, 48_000) }),
    turn(`${id}-2`, { sessionId: id, at: at(1), usage: usage(48_000, 900) }),
    turn(`${id}-3`, { sessionId: id, at: at(2), usage: usage(0, 48_900), ...change } as Parameters<typeof turn>[1]),
  ];
}

async function alertsOver(rules: AlertRules, events: CacheEvent[]) {
  const store = await storeUnderTest();
  await store.write([{ project: 'web', events }]);
  const clock = { now: 0 };
  const notified: Alert[] = [];
  const lines: string[] = [];
  const alerts = new Alerts({ store, rules, projects: () => ['web', 'nothing-stored'], now: () => clock.now, log: createLogger((line) => lines.push(line)), notify: (alert) => notified.push(alert) });
  const at = async (ms: number) => {
    clock.now = ms;
    await alerts.run();
    return alerts.list('web');
  };
  return { store, at, notified, lines };
}

describe('alerts over a store', () => {
  it('new break reason: known from days before, or new, firing until its breaks leave the window', async () => {
    const events = [...session('monday', 0, { tools: FEWER_TOOLS }), ...session('wednesday', 2, { tools: FEWER_TOOLS }), ...session('wednesday-b', 2, { systemBlockHashes: [hashString('billing'), hashString('You are a careful coding agent.')] })];
    const { store, at, notified, lines } = await alertsOver({ newBreakReason: true, windowMs: HOUR, minTurns: 1 }, events);
    const reasons = new Map((await store.breaks('web', {}, {}, { limit: 10 })).items.map((b) => [b.sessionId, b.reason]));
    expect(reasons.get('monday')).toBe(reasons.get('wednesday'));
    expect(reasons.get('wednesday-b')).toBe('system_changed');

    // Half an hour after Wednesday's breaks: only the system change is new.
    const firing = await at(T0 + 2 * DAY + 30 * MINUTE);
    expect(firing.map((a) => [a.rule, a.subject, a.state, a.value])).toEqual([['new_break_reason', 'system_changed', 'firing', 1]]);
    expect(firing[0]).toMatchObject({ project: 'web', startedMs: T0 + 2 * DAY + 30 * MINUTE, resolvedMs: null, agentVersion: null, threshold: null });
    // Still true a minute later: still the one alert, notified once.
    await at(T0 + 2 * DAY + 31 * MINUTE);
    expect(notified.map((a) => a.state)).toEqual(['firing']);

    // Two hours later the break has left the window, and is known.
    const later = await at(T0 + 2 * DAY + 2 * HOUR);
    expect(later.map((a) => [a.subject, a.state, a.resolvedMs])).toEqual([['system_changed', 'resolved', T0 + 2 * DAY + 2 * HOUR]]);
    expect(notified.map((a) => a.state)).toEqual(['firing', 'resolved']);
    // A project with nothing stored is evaluated without an error.
    expect(lines.filter((line) => line.includes('level=error'))).toEqual([]);
  });

  it('cache rate and extra cost: the window only, and not below the turns it needs', async () => {
    // Monday: a cold start and a break: nothing read. Wednesday: hits only.
    const hits = Array.from({ length: 5 }, (_, i) => turn(`hit-${i}`, { sessionId: 'steady', at: 2 * DAY + i * MINUTE, usage: usage(i === 0 ? 0 : 48_000, i === 0 ? 48_000 : 100) }));
    const rules: AlertRules = { cacheRateBelow: 0.5, extraCostAbove: 0.1, windowMs: HOUR, minTurns: 3 };
    const { at } = await alertsOver(rules, [...session('monday', 0, { tools: FEWER_TOOLS }), ...hits]);

    const monday = await at(T0 + 10 * MINUTE);
    expect(monday.map((a) => a.rule).sort()).toEqual(['cache_rate_below', 'extra_cost_above']);
    const rate = monday.find((a) => a.rule === 'cache_rate_below')!;
    // Read 48,000 of 48,360 + 48,900 + 49,020 + 360 uncached.
    expect(rate.value).toBeCloseTo(48_000 / (3 * 120 + 48_000 + 48_000 + 900 + 48_900), 9);
    // 48,900 tokens written instead of read: $0.16870 in an hour.
    expect(monday.find((a) => a.rule === 'extra_cost_above')!.value).toBeCloseTo(0.168705, 6);

    // Wednesday's window holds only hits: both resolve, with the figures that resolved them.
    const wednesday = await at(T0 + 2 * DAY + 10 * MINUTE);
    // The last resolved first.
    expect(wednesday.map((a) => [a.rule, a.state])).toEqual([['extra_cost_above', 'resolved'], ['cache_rate_below', 'resolved']]);
    expect(wednesday.find((a) => a.rule === 'cache_rate_below')!.value).toBeGreaterThan(0.7);
    expect(wednesday.find((a) => a.rule === 'extra_cost_above')!.value).toBe(0);

    // Two turns in the window: too few to judge.
    const { at: atFew } = await alertsOver(rules, session('few', 0, {}).slice(0, 2).map((e) => ({ ...e, usage: usage(0, 48_000) }) as CacheEvent));
    expect((await atFew(T0 + 10 * MINUTE)).filter((a) => a.rule === 'cache_rate_below')).toEqual([]);
  });

  it('names the agent version where the change began: the first new one in the window, else the most common', async () => {
    /** A session `minute` minutes after T0 whose third turn breaks, every turn sent by `version`. */
    const versioned = (id: string, minute: number, version: string) =>
      session(id, 0, { tools: FEWER_TOOLS }).map((e) => {
        const t = e as { ts: number; endTs: number };
        return { ...e, ts: t.ts + minute * MINUTE, endTs: t.endTs + minute * MINUTE, agentVersion: version } as CacheEvent;
      });
    const rules: AlertRules = { extraCostAbove: 0.01, windowMs: HOUR, minTurns: 1 };
    // Evaluated at 2h30: the window is 1h30–2h30, the one before it 0h30–1h30.
    const now = T0 + 150 * MINUTE;

    const newVersion = await alertsOver(rules, [
      ...versioned('before', 60, '1.0.0'),
      ...versioned('a', 100, '1.0.0'),
      ...versioned('b', 110, '1.1.0'),
      ...versioned('c', 120, '1.0.0'),
    ]);
    expect((await newVersion.at(now)).map((a) => [a.rule, a.agentVersion])).toEqual([['extra_cost_above', '1.1.0']]);
    expect(newVersion.notified.map((a) => a.agentVersion)).toEqual(['1.1.0']);

    // Every version of the window ran before it: the one most of its breaks ran, not the first.
    const known = await alertsOver(rules, [
      ...versioned('before-1', 40, '0.9.0'),
      ...versioned('before-2', 60, '1.0.0'),
      ...versioned('a', 100, '0.9.0'),
      ...versioned('b', 110, '1.0.0'),
      ...versioned('c', 120, '1.0.0'),
    ]);
    expect((await known.at(now)).map((a) => [a.rule, a.agentVersion])).toEqual([['extra_cost_above', '1.0.0']]);
  });

  it('fires and resolves all the same when the version of an alert cannot be read, saying so once', async () => {
    // Monday: one break, of a reason new then. Wednesday: breaks of two reasons new then.
    const events = [
      ...session('monday', 0, { tools: FEWER_TOOLS }),
      ...session('wednesday-a', 2, { systemBlockHashes: [hashString('billing'), hashString('You are a careful coding agent.')] }),
      ...session('wednesday-b', 2, { tools: tools(['shell', ...SEED_TOOLS.filter((n) => n !== 'shell')]) }),
    ];
    const store = await storeUnderTest();
    await store.write([{ project: 'web', events }]);
    const clock = { now: T0 + 30 * MINUTE };
    const notified: Alert[] = [];
    const lines: string[] = [];
    let closing: Promise<void> | undefined;
    const alerts = new Alerts({
      store,
      rules: { newBreakReason: true, windowMs: HOUR, minTurns: 1 },
      projects: () => ['web'],
      now: () => clock.now,
      log: createLogger((line) => lines.push(line)),
      notify: (alert) => {
        notified.push(alert);
        // The database goes away on Wednesday, right after the first alert of the run is sent.
        if (clock.now > T0 + DAY) closing ??= store.close();
      },
    });
    await alerts.run();
    expect(notified.map((a) => [a.subject, a.state])).toEqual([['tools_schema_changed', 'firing']]);

    clock.now = T0 + 2 * DAY + 30 * MINUTE;
    await alerts.run();
    await closing;
    // Both new reasons fire (the second without its version) and Monday's resolves.
    expect(notified.slice(1).map((a) => [a.state, a.agentVersion])).toEqual([['firing', null], ['firing', null], ['resolved', null]]);
    expect(notified.slice(1).map((a) => a.subject).sort()).toEqual(['system_changed', 'tools_order_changed', 'tools_schema_changed']);
    expect(alerts.list('web').map((a) => a.state)).toEqual(['firing', 'firing', 'resolved']);
    expect(lines.filter((line) => line.includes('alerts_version_unread'))).toHaveLength(1);
    expect(lines.find((line) => line.includes('alerts_version_unread'))).toMatch(/level=warn .*alerts=1 project=web rule=new_break_reason/);
    expect(lines.filter((line) => line.includes('alerts_evaluation_failed'))).toEqual([]);
  });
});
