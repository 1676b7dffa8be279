// SPEC §7: prompt text, system prompts, tool descriptions, messages and the
// command line in a resource are read (some are hashed) and never kept: not
// in the events, not in the database (its files, or every column of every
// table of a PostgreSQL database), request bodies waiting there for their
// response (waiting_halves) included.
import { describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../../src/ingest/limits.js';
import { OtlpReceiver } from '../../../src/ingest/otlp/receive.js';
import { Pipeline } from '../../../src/ingest/pipeline.js';
import { Counters } from '../../../src/telemetry/counters.js';
import { createLogger } from '../../../src/telemetry/logfmt.js';
import { freshDb, openStore, storedText } from '../../store-under-test.js';
import { fixture, fixtureText, mapped } from './helpers.js';

const FIXTURES = [
  'qwen-code/0.24.4.json',
  'qwen-code/0.24.4-compression.json',
  'qwen-code/0.24.4-changes.json',
  'gemini-cli/0.61.0.json',
  'gemini-cli/0.61.0-compression.json',
  'gemini-cli/0.61.0-changes.json',
  'claude-code/2.1.88.json',
  'claude-code/2.1.332.json',
  'claude-code/2.1.332-compaction.json',
  'claude-code/2.1.332-changes.json',
  'genai/semconv-1.41.json',
  'openinference/openai-0.1.json',
  'vercel-ai/ai-6.json',
  'vercel-ai/ai-5.json',
  'metrics/token-usage.json',
];

/** Every prose string in a fixture, JSON strings opened up: prompts, descriptions, messages, command lines. */
function prose(value: unknown, out: Set<string> = new Set()): Set<string> {
  if (typeof value === 'string') {
    if (/\s/.test(value.trim()) && value.length >= 16) out.add(value);
    if (/^[[{]/.test(value)) {
      try {
        prose(JSON.parse(value), out);
      } catch {
        // Not JSON: the string itself was kept above.
      }
    }
  } else if (Array.isArray(value)) value.forEach((item) => prose(item, out));
  else if (typeof value === 'object' && value !== null) Object.values(value).forEach((item) => prose(item, out));
  return out;
}

describe('privacy', () => {
  it.each(FIXTURES)('%s: no content reaches the events or the database', async (path) => {
    const raw = JSON.parse(fixtureText(path)) as { description: string };
    const secrets = [...prose({ ...raw, description: undefined })];
    expect(secrets.length).toBeGreaterThan(0);

    const result = mapped(fixture(path));
    expect(result.rejected).toEqual([]);
    const events = JSON.stringify([result.events, result.tokenPoints]);

    const db = await freshDb('privacy');
    const store = await openStore(db);
    await store.write([{ project: 'default', events: result.events, tokenPoints: result.tokenPoints }]);
    // Received over OTLP without their response bodies, Claude Code's request bodies wait in the database.
    const receiver = new OtlpReceiver({ pipeline: new Pipeline(store, new Counters(), createLogger(() => {})), counters: new Counters(), now: Date.now, limits: DEFAULT_LIMITS });
    const telemetry = fixture(path);
    const unanswered = { ...telemetry, logs: telemetry.logs.filter((r) => r.attributes['event.name'] !== 'api_response_body') };
    await receiver.export('waiting', 'logs', { telemetry: unanswered, ignored: {} }, 'otlp_http');
    await store.close();
    const utf8 = await storedText(db);
    // The check can fail: what was stored is there to be found.
    expect(utf8).toContain(result.events[0]?.requestId ?? 'default');
    const bodies = telemetry.logs.filter((r) => r.attributes['event.name'] === 'api_request_body').length;
    expect(utf8.includes('claude_request_bodies')).toBe(bodies > 0);

    for (const secret of secrets) {
      expect(events, secret).not.toContain(secret);
      expect(utf8.includes(secret), secret).toBe(false);
    }
  });
});
