// Claude Code's own [PROMPT CACHE BREAK] reports beside cachebreak's verdict
// of the same request: a real server follows real debug-log files (one named
// after its session, one after its process), takes a crafted workload whose
// answer is known, and must join each report to its break — the
// process-named file's by time and cache figures, into the right session —
// and count how often the harness and the provider agree.
import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers.js';
import { breaksWithHarnessOf } from './api.js';
import { cli } from '../cli/run.js';
import { anthropicUsage, iso, opaqueHash, toolRefs, type WireEvent } from './events.js';
import { getJson, postEvents, request, startServer } from './server.js';

const MINUTE = 60_000;
/** Within the last 24 hours, which the web UI shows by default. */
const T0 = Math.floor(Date.now() / MINUTE) * MINUTE - 2 * 60 * MINUTE;
const S1 = 'c0ffee00-1111-4aaa-8bbb-000000000001';
const S2 = 'c0ffee00-2222-4aaa-8bbb-000000000002';
/** The id a headless process named its debug log after: no session's. */
const PROCESS_ID = 'b7d1e3f0-9999-4ccc-8ddd-00000000f00d';

const TOOLS = ['read_file', 'shell'];
const messages = (session: string, n: number, edit = -1) => Array.from({ length: n }, (_, i) => opaqueHash(`${session}/m${i}${i === edit ? '/edited' : ''}`));

interface Turn {
  id: string;
  session: string;
  minute: number;
  read: number;
  write: number;
  tools?: string[];
  system?: string;
  messages: string[];
  diagnostics?: unknown;
}

function turn(t: Turn): WireEvent {
  return {
    type: 'turn',
    requestId: t.id,
    sessionId: t.session,
    ts: iso(T0 + t.minute * MINUTE),
    endTs: iso(T0 + t.minute * MINUTE + 4_000),
    provider: 'anthropic',
    model: 'claude-sonnet-4-5',
    systemHash: opaqueHash(t.system ?? 'system v1'),
    tools: toolRefs(t.tools ?? TOOLS),
    messageHashes: t.messages,
    usage: anthropicUsage(t.read, t.write),
    ...(t.diagnostics !== undefined ? { diagnostics: t.diagnostics } : {}),
  };
}

const GREP = [...TOOLS, 'grep'];
const TURNS: WireEvent[] = [
  turn({ id: 'a1', session: S1, minute: 0, read: 0, write: 20_000, messages: messages('s1', 1) }),
  // Break 1: a tool added. The provider says so too.
  turn({ id: 'a2', session: S1, minute: 1, read: 0, write: 21_000, tools: GREP, messages: messages('s1', 3), diagnostics: { cache_miss_reason: { type: 'tools_changed', cache_missed_input_tokens: 20_000 } } }),
  turn({ id: 'a3', session: S1, minute: 2, read: 21_000, write: 100, tools: GREP, messages: messages('s1', 5) }),
  // Break 2: the system prompt changed.
  turn({ id: 'a4', session: S1, minute: 3, read: 0, write: 22_000, tools: GREP, system: 'system v2', messages: messages('s1', 7) }),
  turn({ id: 'a5', session: S1, minute: 4, read: 22_000, write: 100, tools: GREP, system: 'system v2', messages: messages('s1', 9) }),
  // Break 3: nothing changed; the provider's diagnosis is no verdict.
  turn({ id: 'a6', session: S1, minute: 5, read: 0, write: 23_000, tools: GREP, system: 'system v2', messages: messages('s1', 11), diagnostics: { cache_miss_reason: { type: 'unavailable' } } }),
  turn({ id: 'a7', session: S1, minute: 6, read: 23_000, write: 100, tools: GREP, system: 'system v2', messages: messages('s1', 13) }),
  // Break 4: the first message rewritten; the harness blames the server, the provider the system prompt.
  turn({ id: 'a8', session: S1, minute: 7, read: 0, write: 24_000, tools: GREP, system: 'system v2', messages: messages('s1', 15, 0), diagnostics: { cache_miss_reason: { type: 'system_changed' } } }),
  turn({ id: 'b1', session: S2, minute: 0, read: 0, write: 30_000, messages: messages('s2', 1) }),
  // Break 5, in the session whose debug log is named after its process.
  turn({ id: 'b2', session: S2, minute: 1, read: 0, write: 31_000, tools: GREP, messages: messages('s2', 3) }),
];

function line(minute: number, reason: string, call: number, before: number, creation: number, source = 'repl_main_thread'): string {
  const at = iso(T0 + minute * MINUTE + 5_000);
  return `${at} [DEBUG] [API:request] Creating client\n${at} [WARN] [PROMPT CACHE BREAK] ${reason} [source=${source}, call #${call}, cache read: ${before} → 0, creation: ${creation}]\n`;
}

const SESSION_LOG =
  line(1, 'tools changed (+1/-0 tools)', 2, 20_000, 21_000) +
  line(3, 'system prompt changed (+120 chars)', 4, 21_000, 22_000) +
  line(5, 'likely server-side (prompt unchanged, <5min gap)', 6, 22_000, 23_000) +
  line(7, 'likely server-side (prompt unchanged, <5min gap)', 8, 23_000, 24_000) +
  // A break the harness saw and cachebreak has no record of.
  line(9, 'possible 5min TTL expiry (prompt unchanged)', 10, 24_000, 99_999);
const PROCESS_LOG = line(1, 'tools changed (+1/-0 tools)', 2, 30_000, 31_000, 'sdk');

const RANGE = `from=${iso(T0 - MINUTE)}&to=${iso(T0 + 60 * MINUTE)}`;

describe("the harness's own break reports beside cachebreak's", () => {
  it('joins each report to its break (a process-named log into the right session) and counts the agreement', async () => {
    const dir = tempDir();
    const server = await startServer({ args: ['--tail', join(dir, '*.txt')] });
    expect((await postEvents(server.url, { events: TURNS })).status).toBe(200);
    writeFileSync(join(dir, `${S1}.txt`), '');
    writeFileSync(join(dir, `${PROCESS_ID}.txt`), '');
    appendFileSync(join(dir, `${S1}.txt`), SESSION_LOG);
    appendFileSync(join(dir, `${PROCESS_ID}.txt`), PROCESS_LOG);
    // Bounded: the tail stores the six reports within seconds.
    for (let i = 0; i < 100; i++) {
      const stored = await getJson<{ breaks: unknown[] }>(server.url, `/v1/breaks/external?${RANGE}&limit=100`);
      if (stored.breaks.length === 6) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }

    const breaks = await breaksWithHarnessOf(server.url, `${RANGE}&limit=100`);
    const byId = Object.fromEntries(breaks.map((b) => [b.requestId, b]));
    expect(Object.keys(byId).sort()).toEqual(['a2', 'a4', 'a6', 'a8', 'b2']);
    expect(byId['a2']).toMatchObject({
      reason: 'tools_schema_changed',
      harness: { harness: 'claude-code', reason: 'tools changed (+1/-0 tools)', verdicts: ['tools_changed'], agrees: true, sessionId: S1, callNumber: 2, line: 2 },
    });
    expect(byId['a6']).toMatchObject({ reason: 'likely_provider_ttl_or_eviction', harness: { verdicts: ['no_change'], agrees: true } });
    expect(byId['a8']).toMatchObject({ reason: 'messages_rewritten', harness: { reason: 'likely server-side (prompt unchanged, <5min gap)', agrees: false } });
    // The process-named log's report lands on the break of the session it belongs to.
    expect(byId['b2']).toMatchObject({
      sessionId: S2,
      reason: 'tools_schema_changed',
      harness: { sessionId: PROCESS_ID, file: join(dir, `${PROCESS_ID}.txt`), reason: 'tools changed (+1/-0 tools)', agrees: true },
    });

    // The reports listed as read, each with the break it joined: the process-named one in session S2.
    const listed = await getJson<{ breaks: { sessionId: string; callNumber: number; joined: unknown }[] }>(server.url, `/v1/breaks/external?${RANGE}&limit=100`);
    const byReport = (r: { sessionId: string; callNumber: number }) => `${r.sessionId}#${String(r.callNumber).padStart(2, '0')}`;
    expect(Object.fromEntries(listed.breaks.map((r) => [byReport(r), r.joined]))).toEqual({
      [`${S1}#02`]: { sessionId: S1, agentId: 'main', requestId: 'a2', reason: 'tools_schema_changed' },
      [`${S1}#04`]: { sessionId: S1, agentId: 'main', requestId: 'a4', reason: 'system_changed' },
      [`${S1}#06`]: { sessionId: S1, agentId: 'main', requestId: 'a6', reason: 'likely_provider_ttl_or_eviction' },
      [`${S1}#08`]: { sessionId: S1, agentId: 'main', requestId: 'a8', reason: 'messages_rewritten' },
      [`${S1}#10`]: null,
      [`${PROCESS_ID}#02`]: { sessionId: S2, agentId: 'main', requestId: 'b2', reason: 'tools_schema_changed' },
    });

    const agreement = await getJson(server.url, `/v1/breaks/agreement?${RANGE}`);
    expect(agreement).toEqual({
      breaks: 5,
      harness: { compared: 5, agreed: 4, rate: 0.8, unjoinedReports: 1 },
      provider: { compared: 2, agreed: 1, rate: 0.5, alone: 3 },
      reasons: [
        { cachebreak: 'tools_changed', breaks: 2, harness: { compared: 2, agreed: 2, rate: 1 }, provider: { compared: 1, agreed: 1, rate: 1, alone: 1 } },
        { cachebreak: 'messages_rewritten', breaks: 1, harness: { compared: 1, agreed: 0, rate: 0 }, provider: { compared: 1, agreed: 0, rate: 0, alone: 0 } },
        { cachebreak: 'no_change', breaks: 1, harness: { compared: 1, agreed: 1, rate: 1 }, provider: { compared: 0, agreed: 0, rate: null, alone: 1 } },
        { cachebreak: 'system_changed', breaks: 1, harness: { compared: 1, agreed: 1, rate: 1 }, provider: { compared: 0, agreed: 0, rate: null, alone: 1 } },
      ],
      rows: [
        { cachebreak: 'messages_rewritten', harness: 'no_change', provider: 'system_changed', breaks: 1 },
        { cachebreak: 'no_change', harness: 'no_change', provider: null, breaks: 1 },
        { cachebreak: 'system_changed', harness: 'system_changed', provider: null, breaks: 1 },
        { cachebreak: 'tools_changed', harness: 'tools_changed', provider: null, breaks: 1 },
        { cachebreak: 'tools_changed', harness: 'tools_changed', provider: 'tools_changed', breaks: 1 },
      ],
    });
    // One session's agreement: only its breaks and reports.
    expect(await getJson(server.url, `/v1/breaks/agreement?${RANGE}&sessionId=${S2}`)).toMatchObject({ breaks: 1, harness: { compared: 1, agreed: 1, unjoinedReports: 0 } });
    expect((await request(server.url, '/v1/breaks/agreement?from=yesterday')).status).toBe(400);

    // Grafana: the agreement and verdict tables, and the breaks table's harness columns.
    const grafana = (query: string) => getJson<Record<string, unknown>[]>(server.url, `/grafana/${query}${query.includes('?') ? '&' : '?'}${RANGE}`);
    expect(await grafana('agreement')).toEqual([
      { source: 'harness', compared: 5, agreed: 4, rate: 0.8, unjoinedReports: 1 },
      { source: 'provider', compared: 2, agreed: 1, rate: 0.5, unjoinedReports: null },
    ]);
    expect((await grafana('verdicts')).map((r) => [r.cachebreak, r.harness, r.provider, r.breaks])).toEqual([
      ['messages_rewritten', 'no_change', 'system_changed', 1],
      ['no_change', 'no_change', 'none', 1],
      ['system_changed', 'system_changed', 'none', 1],
      ['tools_changed', 'tools_changed', 'none', 1],
      ['tools_changed', 'tools_changed', 'tools_changed', 1],
    ]);
    const rows = await grafana('breaks');
    expect(rows.filter((r) => r.sessionId === S2).map((r) => [r.requestId, r.harnessReason, r.harnessAgrees])).toEqual([['b2', 'tools changed (+1/-0 tools)', 'yes']]);
    expect(rows.find((r) => r.requestId === 'a8')).toMatchObject({ harnessReason: 'likely server-side (prompt unchanged, <5min gap)', harnessAgrees: 'no' });

    // The web UI: the agreement above the latest breaks, and the harness's report on the break's page beside ours.
    const page = await (await fetch(`${server.url}/`)).text();
    expect(page).toContain('the harness agreed on 4 of 5 (80.0 %); the provider agreed on 1 of 2 (50.0 %)');
    const breakPage = await (await fetch(`${server.url}/breaks/a8`)).text();
    expect(breakPage).toContain('<td>likely server-side (prompt unchanged, &#60;5min gap)</td><td>no_change — differs</td>');

    // The breaks where a side agrees, disagrees or said nothing: over the API and in the explorer.
    const ids = async (query: string) => (await breaksWithHarnessOf(server.url, `${RANGE}&limit=100&${query}`)).map((b) => b.requestId).sort();
    expect(await ids('harnessAgreement=disagrees')).toEqual(['a8']);
    expect(await ids('harnessAgreement=agrees')).toEqual(['a2', 'a4', 'a6', 'b2']);
    expect(await ids('providerAgreement=agrees')).toEqual(['a2']);
    expect(await ids('providerAgreement=disagrees')).toEqual(['a8']);
    expect(await ids('providerAgreement=silent')).toEqual(['a4', 'a6', 'b2']);
    expect(await ids('harnessAgreement=agrees&providerAgreement=silent&sessionId=' + S1)).toEqual(['a4', 'a6']);
    const wrong = await request(server.url, `/v1/breaks?harnessAgreement=maybe`);
    expect(wrong.status).toBe(400);
    expect((wrong.body as { error: { message: string } }).error.message).toBe('harnessAgreement: expected one of agrees, disagrees, silent, got "maybe"');
    const explorer = await (await fetch(`${server.url}/breaks?${RANGE}&harnessAgreement=disagrees`)).text();
    expect([...explorer.matchAll(/<tr data-request="([^"]+)">/g)].map((m) => m[1])).toEqual(['a8']);
    expect(explorer).toContain('<option selected>disagrees</option>');

    // cachebreak report, on the same database.
    await server.stop();
    const report = await cli(['report', '--db', server.db, '--json']);
    expect(report.code).toBe(0);
    const json = JSON.parse(report.stdout) as { agreement: unknown; harnessReports: { requestId: string; sessionId: string; harnessReason: string; agrees: boolean }[] };
    expect(json.agreement).toEqual(agreement);
    expect(json.harnessReports.find((r) => r.requestId === 'b2')).toMatchObject({ sessionId: S2, harnessReason: 'tools changed (+1/-0 tools)', agrees: true });
    const text = await cli(['report', '--db', server.db]);
    expect(text.stdout).toMatch(/harness \(its own reports\)\s+agreed on 4 of 5 breaks\s+80\.0%/);
    expect(text.stdout).toContain('1 harness report matched no break');
  });
});
