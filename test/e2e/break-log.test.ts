// SPEC §6: every break is one logfmt line on the server's stderr, `level=warn
// event=prompt_cache_break reason=… session=… agent=… request=…
// previousCacheReadTokens=… currentCacheReadTokens=… changedToolNames=a,b`.
import { describe, expect, it } from 'vitest';
import { breaksOf } from './api.js';
import { openaiSession, seedSession, SEED_TOOLS, splitTurn } from './events.js';
import { postEvents, startServer } from './server.js';

const isBreakLine = (line: string) => / event=prompt_cache_break /.test(line);

/** logfmt → ordered [key, value] pairs; quoted values unquoted. */
function parseLogfmt(line: string): [string, string][] {
  const pairs: [string, string][] = [];
  for (const match of line.matchAll(/(\w+)=("(?:[^"\\]|\\.)*"|\S*)/g)) {
    const raw = match[2]!;
    pairs.push([match[1]!, raw.startsWith('"') ? (JSON.parse(raw) as string) : raw]);
  }
  return pairs;
}

/** The SPEC's keys, in the SPEC's order, with their values; other keys may sit between them. */
function specFields(line: string): [string, string][] {
  const order = ['level', 'event', 'reason', 'session', 'agent', 'request', 'previousCacheReadTokens', 'currentCacheReadTokens', 'changedToolNames'];
  return parseLogfmt(line).filter(([key]) => order.includes(key));
}

describe('break log lines of a real server', () => {
  it('each break is exactly one warn line with the SPEC fields, also when events are repeated', async () => {
    const server = await startServer();
    const events = [...seedSession(), ...openaiSession()];
    // As a harness sends them: one request per event.
    for (const event of events) expect((await postEvents(server.url, [event])).status).toBe(200);
    const lines = await server.waitForStderr(isBreakLine, 2);

    expect(lines.map(specFields)).toEqual([
      [
        ['level', 'warn'],
        ['event', 'prompt_cache_break'],
        ['reason', 'tools_order_changed'],
        ['session', 'sess_A'],
        ['agent', 'main'],
        ['request', 'req_03'],
        ['previousCacheReadTokens', '48000'],
        ['currentCacheReadTokens', '0'],
        ['changedToolNames', 'mcp__filesystem__read_tree,mcp__github__search_issues'],
      ],
      [
        ['level', 'warn'],
        ['event', 'prompt_cache_break'],
        ['reason', 'system_changed'],
        ['session', 'sess_B'],
        ['agent', 'main'],
        ['request', 'b_03'],
        ['previousCacheReadTokens', '29952'],
        ['currentCacheReadTokens', '0'],
      ],
    ]);
    // ts first, as on every line of the log.
    for (const line of lines) expect(line).toMatch(/^ts=\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z level=warn event=prompt_cache_break /);

    // A retry of everything logs nothing new; the next break is logged once.
    expect((await postEvents(server.url, events)).body).toMatchObject({ accepted: 0, duplicates: events.length });
    const { snapshot, usage } = splitTurn('team chat #1', { requestId: 'c_01', at: 0, read: 0, write: 40_000 });
    const next = splitTurn('team chat #1', { requestId: 'c_02', at: 10, tools: [...SEED_TOOLS].reverse(), read: 0, write: 40_000 });
    expect((await postEvents(server.url, [snapshot, usage, next.snapshot, next.usage])).body).toMatchObject({ accepted: 4 });
    const all = await server.waitForStderr(isBreakLine, 3);
    expect(all).toHaveLength(3);
    // A session id with spaces and # is quoted; the tool list stays one value.
    expect(all[2]).toContain(' session="team chat #1" ');
    expect(Object.fromEntries(parseLogfmt(all[2]!))).toMatchObject({
      reason: 'tools_order_changed',
      session: 'team chat #1',
      request: 'c_02',
      previousRequest: 'c_01',
      changedToolNames: 'mcp__filesystem__read_tree,mcp__github__search_issues,read_file,shell',
    });

    // One line per stored break, and no line without a stored break.
    const logged = all.map((line) => Object.fromEntries(parseLogfmt(line)).request).sort();
    expect(logged).toEqual((await breaksOf(server.url)).map((b) => b.requestId).sort());
    // The start's warning that the server has no API key is the only other one.
    expect(server.stderrLines.filter((line) => / level=(warn|error) /.test(line) && !isBreakLine(line) && !line.includes(' event=open_access '))).toEqual([]);
  });
});
