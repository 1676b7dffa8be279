// `cachebreak demo` gives every insight something to show, and each insight
// finds exactly what the workload says it planted (DEMO_PLANTED).
import { describe, expect, it } from 'vitest';
import { DEMO_PLANTED } from '../../src/cli/demo/workload.js';
import { DEMO_RANGE, demoApp } from '../grafana/demo.js';

const RANGE = `from=${DEMO_RANGE.from}&to=${DEMO_RANGE.to}`;
const scriptOf = (sessionId: string) => sessionId.replace(/-[0-9a-f]{4}$/, '');

/** The demo in a fresh database (each test's is removed after it), with the session and agent of every turn by request id. */
async function demo() {
  const app = await demoApp();
  const get = async (path: string) => {
    const { status, body } = await app.get(path);
    expect(status, path).toBe(200);
    return body;
  };
  const turns = new Map<string, { sessionId: string; agentId: string }>();
  for (const s of (await get(`/v1/sessions?${RANGE}&limit=1000`)).sessions) {
    for (const t of (await get(`/v1/sessions/${s.sessionId}/turns`)).turns) turns.set(t.requestId, { sessionId: s.sessionId, agentId: t.agentId });
  }
  return { get, turns };
}

describe('the demo plants what each insight finds', () => {
  it('avoidable breaks: the reordered MCP tools, the clock block and the breakpoint beyond the lookback', async () => {
    const { get, turns } = await demo();
    const body = await get(`/v1/insights/avoidable?${RANGE}`);
    const [tools, system, lookback] = body.fixes;
    const planted = DEMO_PLANTED.avoidable;
    expect(new Set(tools.examples.map((id: string) => scriptOf(turns.get(id)!.sessionId)))).toEqual(new Set(planted.stable_tool_order.scripts));
    expect(tools.involved.map((t: { name: string }) => t.name).sort()).toEqual([...planted.stable_tool_order.tools].sort());
    expect(new Set(system.examples.map((id: string) => scriptOf(turns.get(id)!.sessionId)))).toEqual(new Set(planted.volatile_block_after_breakpoint.scripts));
    expect(system.involved.map((b: { name: string }) => b.name)).toEqual(planted.volatile_block_after_breakpoint.blocks);
    expect(new Set(lookback.examples.map((id: string) => scriptOf(turns.get(id)!.sessionId)))).toEqual(new Set(planted.breakpoint_within_lookback.scripts));
    expect(tools.savings.usd).toBeGreaterThan(0);
    expect(system.savings.usd).toBeGreaterThan(0);
  });

  it('volatile parts: exactly the planted blocks and tools', async () => {
    const { get } = await demo();
    const { parts } = await get(`/v1/insights/volatile?${RANGE}&limit=1000`);
    expect(parts.map((p: { name: string }) => p.name).sort()).toEqual([...DEMO_PLANTED.volatile.parts].sort());
  });

  it('fan-out cold starts: one per planted delegation, of its subagents', async () => {
    const { get, turns } = await demo();
    const body = await get(`/v1/insights/fanout?${RANGE}&limit=1000`);
    const found = body.fanOuts.map((f: { requestIds: string[] }) => {
      const of = f.requestIds.map((id) => turns.get(id)!);
      expect(new Set(of.map((t) => t.sessionId)).size).toBe(1);
      const kinds = new Set(of.map((t) => t.agentId.replace(/-[0-9a-f]{4}$/, '')));
      expect(kinds.size).toBe(1);
      return `${scriptOf(of[0]!.sessionId)} ${[...kinds][0]} ${of.length}`;
    });
    expect(found.sort()).toEqual(DEMO_PLANTED.fanOut.delegations.map((d) => `${d.script} ${d.agents} ${d.turns}`).sort());
    expect(body.writtenAgainTokens).toBeGreaterThan(0);
  });

  it('TTL advice: the planted stream is told to switch to 1 h and saves most; the 1-hour reviewer is told to stay', async () => {
    const { get } = await demo();
    const { groups } = await get(`/v1/insights/ttl?${RANGE}`);
    const top = groups[0];
    expect(scriptOf(top.sessionId)).toBe(DEMO_PLANTED.ttl.toOneHour);
    expect(top).toMatchObject({ agentId: 'main', currentTier: '5m', advisedTier: '1h' });
    expect(top.adviceSavesUsd).toBeGreaterThan(0);
    const stays = groups.find((g: { sessionId: string; agentId: string }) => scriptOf(g.sessionId) === DEMO_PLANTED.ttl.staysAtOneHour && g.agentId === 'main');
    expect(stays).toMatchObject({ currentTier: '1h', advisedTier: '1h', adviceSavesUsd: 0 });
  });

  it('chronic misses: exactly the planted streams, with the planted cause', async () => {
    const { get } = await demo();
    const { streams } = await get(`/v1/insights/chronic?${RANGE}`);
    expect(streams.map((s: { sessionId: string; cause: string }) => ({ script: scriptOf(s.sessionId), cause: s.cause }))).toEqual(DEMO_PLANTED.chronic);
  });

  it('agreement: exactly the planted provider verdicts, the disagreeing break one request away', async () => {
    const { get } = await demo();
    const body = await get(`/v1/insights/agreement?${RANGE}`);
    expect(body.harness).toEqual([]);
    const cells = body.provider.map((c: { cachebreak: string; other: string; disagreeing: string[] }) => ({ cachebreak: c.cachebreak, other: c.other }));
    expect(cells).toEqual(expect.arrayContaining(DEMO_PLANTED.agreement.provider.map(({ cachebreak, other }) => ({ cachebreak, other }))));
    expect(cells).toHaveLength(DEMO_PLANTED.agreement.provider.length);
    const disagreeing = body.provider.find((c: { agrees: boolean }) => !c.agrees);
    const brk = await get(`/v1/breaks/${disagreeing.disagreeing[0]}`);
    expect(scriptOf(brk.break.sessionId)).toBe('think-harder');
  });
});
