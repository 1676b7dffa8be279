// The provider's own verdict beside ours, from both providers and two
// ingest paths, against a real server: OpenAI Responses answers (gpt-5.6
// prompt_cache_diagnostics) as raw bodies through POST /v1/events, and
// Anthropic answers (cache diagnostics) as raw usage in native log records
// through a real OTLP/HTTP exporter. One provider column, agreement per
// reason on /v1/breaks/agreement, the web UI and `cachebreak report`; a TTL
// break neither provider diagnoses stands alone, not as a disagreement.
import { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { describe, expect, it } from 'vitest';
import { cli } from '../cli/run.js';
import { emitLogs, nativeRecord } from '../otlp/harness.js';
import { anthropicAnswer, mockUpstream } from '../proxy/upstreams.js';
import { breaksOf } from './api.js';
import { anthropicUsage, iso, opaqueHash, toolRefs, type WireEvent } from './events.js';
import { getJson, postEvents, startServer } from './server.js';

const MINUTE = 60_000;
const T0 = Math.floor(Date.now() / MINUTE) * MINUTE - 5 * 60 * MINUTE;
const RANGE = `from=${iso(T0 - MINUTE)}&to=${iso(T0 + 4 * 60 * MINUTE)}`;

function turn(id: string, session: string, provider: string, model: string, minute: number, system: string, tools: string[], usage: unknown): WireEvent {
  return {
    type: 'turn',
    requestId: id,
    sessionId: session,
    ts: iso(T0 + minute * MINUTE),
    endTs: iso(T0 + minute * MINUTE + 3_000),
    provider,
    model,
    systemHash: opaqueHash(system),
    tools: toolRefs(tools),
    messageHashes: Array.from({ length: 1 + 2 * Math.min(minute, 3) }, (_, i) => opaqueHash(`${session}/m${i}`)),
    usage,
  };
}

/** An OpenAI Responses answer as returned, the diagnosis beside its usage when it has one. */
const responses = (id: string, read: number, write: number, diagnosis?: unknown) => ({
  id,
  object: 'response',
  status: 'completed',
  usage: { input_tokens: read + write + 120, input_tokens_details: { cached_tokens: read, cache_write_tokens: write }, output_tokens: 40 },
  ...(diagnosis === undefined ? {} : { prompt_cache_diagnostics: diagnosis }),
});
/** An Anthropic Messages answer as returned. */
const messages = (id: string, read: number, write: number, diagnostics?: unknown) => ({
  id,
  type: 'message',
  role: 'assistant',
  usage: anthropicUsage(read, write),
  ...(diagnostics === undefined ? {} : { diagnostics }),
});

const OPENAI_DIAGNOSIS = { type: 'cache_miss', reason: 'tools_changed', cache_missed_tokens: 10_000, comparison_reusable_tokens: 10_000 };
const ANTHROPIC_DIAGNOSIS = { cache_miss_reason: { type: 'system_changed', cache_missed_input_tokens: 20_000 } };

const OPENAI_TURNS = [
  turn('o1', 'openai', 'openai', 'gpt-5.6', 0, 'sys', ['read'], responses('resp_1', 0, 10_000)),
  // A tool added: OpenAI says tools_changed, as we do.
  turn('o2', 'openai', 'openai', 'gpt-5.6', 1, 'sys', ['read', 'grep'], responses('resp_2', 0, 10_500, OPENAI_DIAGNOSIS)),
  // Three idle hours: past every TTL, nothing changed, no diagnosis.
  turn('o3', 'openai', 'openai', 'gpt-5.6', 180, 'sys', ['read', 'grep'], responses('resp_3', 0, 11_000, { type: 'cache_hit' })),
];
const ANTHROPIC_TURNS = [
  turn('a1', 'anthropic', 'anthropic', 'claude-sonnet-4-5', 0, 'v1', ['read'], messages('msg_1', 0, 20_000)),
  // The system prompt edited: Anthropic says system_changed, as we do.
  turn('a2', 'anthropic', 'anthropic', 'claude-sonnet-4-5', 1, 'v2', ['read'], messages('msg_2', 0, 21_000, ANTHROPIC_DIAGNOSIS)),
  turn('a3', 'anthropic', 'anthropic', 'claude-sonnet-4-5', 180, 'v2', ['read'], messages('msg_3', 0, 22_000)),
];

describe("the provider's verdict beside ours", () => {
  it("reads OpenAI's and Anthropic's diagnoses from raw answers (HTTP and OTLP) and counts agreement per reason, silence apart", async () => {
    const server = await startServer();
    expect((await postEvents(server.url, { events: OPENAI_TURNS })).status).toBe(200);
    const exporter = new OTLPLogExporter({ url: `${server.url}/v1/logs` });
    expect(await emitLogs(exporter, ANTHROPIC_TURNS.map(nativeRecord))).toEqual([{ code: 0 }]);

    const breaks = Object.fromEntries((await breaksOf(server.url)).map((b) => [b.requestId, b]));
    expect(Object.keys(breaks).sort()).toEqual(['a2', 'a3', 'o2', 'o3']);
    expect(breaks['o2']).toMatchObject({ reason: 'tools_schema_changed', providerDiagnosis: { prompt_cache_diagnostics: OPENAI_DIAGNOSIS } });
    expect(breaks['a2']).toMatchObject({ reason: 'system_changed', providerDiagnosis: { diagnostics: ANTHROPIC_DIAGNOSIS } });
    expect(breaks['o3']).toMatchObject({ reason: 'likely_provider_ttl_or_eviction', providerDiagnosis: { prompt_cache_diagnostics: { type: 'cache_hit' } } });
    expect(breaks['a3']).toMatchObject({ reason: 'likely_provider_ttl_or_eviction', providerDiagnosis: null });

    const agreement = await getJson<Record<string, unknown>>(server.url, `/v1/breaks/agreement?${RANGE}`);
    expect(agreement['provider']).toEqual({ compared: 2, agreed: 2, rate: 1, alone: 2 });
    const none = { compared: 0, agreed: 0, rate: null };
    expect(agreement['reasons']).toEqual([
      { cachebreak: 'no_change', breaks: 2, harness: none, provider: { ...none, alone: 2 } },
      { cachebreak: 'system_changed', breaks: 1, harness: none, provider: { compared: 1, agreed: 1, rate: 1, alone: 0 } },
      { cachebreak: 'tools_changed', breaks: 1, harness: none, provider: { compared: 1, agreed: 1, rate: 1, alone: 0 } },
    ]);

    // The web UI: the rate, the silent breaks apart, a row per reason; the missed tokens on the break's page.
    const page = await (await fetch(`${server.url}/?${RANGE}`)).text();
    expect(page).toContain('the provider agreed on 2 of 2 (100.0 %); the provider said nothing on 2 (ours alone)');
    expect(page).toContain('<tr><td><span class="wrap">no_<wbr>change</span></td><td class="num">2</td><td class="num">–</td><td class="num">–</td><td class="num">2</td></tr>');
    expect(page).toContain('<tr><td><span class="wrap">tools_<wbr>changed</span></td><td class="num">1</td><td class="num">–</td><td class="num">1 of 1</td><td class="num">0</td></tr>');
    const breakPage = await (await fetch(`${server.url}/breaks/o2`)).text();
    expect(breakPage).toContain('openai: 10,000 input tokens missed');
    expect(breakPage).toContain('tools_changed — agrees');

    // cachebreak report: the same agreement, and the table per reason.
    await server.stop();
    const json = await cli(['report', '--db', server.db, '--json', '--from', iso(T0 - MINUTE), '--to', iso(T0 + 4 * 60 * MINUTE)]);
    expect(json.code).toBe(0);
    expect((JSON.parse(json.stdout) as { agreement: unknown }).agreement).toEqual(agreement);
    const text = await cli(['report', '--db', server.db, '--from', iso(T0 - MINUTE), '--to', iso(T0 + 4 * 60 * MINUTE)]);
    expect(text.stdout).toContain('(the provider said nothing on 2 breaks: ours alone, not counted as disagreement)');
    expect(text.stdout).toMatch(/no_change\s+2\s+-\s+-\s+2/);
    expect(text.stdout).toMatch(/system_changed\s+1\s+-\s+1 of 1\s+0/);
  });

  it('cachebreak proxy --provider-diagnostics asks Anthropic for its diagnosis, merged with the client betas; without it, requests go unchanged', async () => {
    const upstream = await mockUpstream((request) => anthropicAnswer(request, { input_tokens: 10 }, `req_${upstream.received.length}`));
    try {
      const body = JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] });
      const call = async (proxyUrl: string | undefined, betas: string) => {
        const response = await fetch(`${proxyUrl}/anthropic/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json', 'anthropic-beta': betas }, body });
        expect(response.status).toBe(200);
        await response.arrayBuffer();
      };
      const on = await startServer({ command: 'proxy', args: ['--anthropic-upstream', upstream.url, '--provider-diagnostics'] });
      await call(on.proxyUrl, 'context-1m-2025-08-07');
      await call(on.proxyUrl, 'cache-diagnosis-2026-04-07');
      await on.stop();
      const off = await startServer({ command: 'proxy', args: ['--anthropic-upstream', upstream.url] });
      await call(off.proxyUrl, 'context-1m-2025-08-07');
      expect(upstream.received.map((r) => r.headers['anthropic-beta'])).toEqual([
        'context-1m-2025-08-07,cache-diagnosis-2026-04-07',
        'cache-diagnosis-2026-04-07',
        'context-1m-2025-08-07',
      ]);
    } finally {
      await upstream.close();
    }
  });
});
