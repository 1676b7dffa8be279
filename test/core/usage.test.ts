import { describe, expect, it } from 'vitest';
import type { Usage } from '../../src/core/types.js';
import { normalizeReported, normalizeUsage, PROVIDERS, resolveProvider } from '../../src/core/usage.js';
import { USAGE_FIXTURES as fixtures } from './usage-fixtures.js';

function usageOf(provider: string, raw: unknown): Usage {
  const result = normalizeUsage(provider, raw);
  if (!result.ok) throw new Error(`${result.field}: ${result.error}`);
  return result.usage;
}

const totalInput = (usage: Usage) => usage.uncached + usage.read + usage.write;

describe('provider fixtures', () => {
  it('cover every supported provider', () => {
    const dirs = new Set(fixtures.map(([file]) => file.split(/[/\\]/)[0]));
    expect([...dirs].sort()).toEqual(Object.keys(PROVIDERS).sort());
  });

  it.each(fixtures)('%s', (_file, fixture) => {
    const usage = usageOf(fixture.provider, fixture.raw);
    expect(usage).toEqual(fixture.expected);
    expect(totalInput(usage)).toBe(fixture.totalInput);
  });

  it.each(fixtures)('%s needs no provider name', (_file, fixture) => {
    expect(usageOf('', fixture.raw)).toEqual(fixture.expected);
    expect(usageOf('some-gateway', fixture.raw)).toEqual(fixture.expected);
  });
});

describe('input counts that exclude or include the cache', () => {
  // Each case fails if cache is subtracted from an exclusive count (uncached
  // too low), or added to an inclusive one (total too high).
  it.each([
    [
      'Anthropic excludes',
      'anthropic',
      { input_tokens: 50, cache_read_input_tokens: 10_000, cache_creation_input_tokens: 2_000 },
      50,
      12_050,
    ],
    [
      'Bedrock excludes',
      'bedrock',
      { inputTokens: 50, cacheReadInputTokens: 10_000, cacheWriteInputTokens: 2_000 },
      50,
      12_050,
    ],
    [
      'OpenAI chat includes',
      'openai',
      { prompt_tokens: 12_050, prompt_tokens_details: { cached_tokens: 10_000, cache_write_tokens: 2_000 } },
      50,
      12_050,
    ],
    [
      'OpenAI Responses includes',
      'openai',
      { input_tokens: 12_050, input_tokens_details: { cached_tokens: 10_000, cache_write_tokens: 2_000 } },
      50,
      12_050,
    ],
    [
      'OpenRouter includes',
      'openrouter',
      { prompt_tokens: 10_339, prompt_tokens_details: { cached_tokens: 10_318 } },
      21,
      10_339,
    ],
    ['xAI includes', 'xai', { prompt_tokens: 8_192, prompt_tokens_details: { cached_tokens: 8_064 } }, 128, 8_192],
    [
      'DashScope includes',
      'dashscope',
      { prompt_tokens: 12_050, prompt_tokens_details: { cached_tokens: 10_000, cache_creation_input_tokens: 2_000 } },
      50,
      12_050,
    ],
    ['Gemini includes', 'gemini', { promptTokenCount: 12_000, cachedContentTokenCount: 10_000 }, 2_000, 12_000],
    [
      'DeepSeek is hit + miss',
      'deepseek',
      { prompt_tokens: 12_000, prompt_cache_hit_tokens: 10_000, prompt_cache_miss_tokens: 2_000 },
      2_000,
      12_000,
    ],
    [
      'DeepSeek without a miss count',
      'deepseek',
      { prompt_tokens: 12_000, prompt_cache_hit_tokens: 10_000 },
      2_000,
      12_000,
    ],
  ])('%s', (_name, provider, raw, uncached, total) => {
    const usage = usageOf(provider, raw);
    expect(usage.uncached).toBe(uncached);
    expect(totalInput(usage)).toBe(total);
  });
});

describe('unreported is not zero', () => {
  const N = 3_000;
  it.each([
    ['Anthropic zeros', 'anthropic', { input_tokens: N, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 }, true],
    ['Anthropic without cache fields', 'anthropic', { input_tokens: N, output_tokens: 5 }, false],
    ['Anthropic null cache fields', 'anthropic', { input_tokens: N, cache_read_input_tokens: null }, false],
    ['Bedrock zeros', 'bedrock', { inputTokens: N, cacheReadInputTokens: 0, cacheWriteInputTokens: 0 }, true],
    ['Bedrock without cache fields', 'bedrock', { inputTokens: N }, false],
    ['OpenAI cached_tokens 0', 'openai', { prompt_tokens: N, prompt_tokens_details: { cached_tokens: 0 } }, true],
    ['OpenAI details without cached_tokens', 'openai', { prompt_tokens: N, prompt_tokens_details: {} }, false],
    ['OpenAI null details', 'openai', { prompt_tokens: N, prompt_tokens_details: null }, false],
    ['Responses cached_tokens 0', 'openai', { input_tokens: N, input_tokens_details: { cached_tokens: 0 } }, true],
    ['DeepSeek hit 0', 'deepseek', { prompt_tokens: N, prompt_cache_hit_tokens: 0, prompt_cache_miss_tokens: N }, true],
    ['DeepSeek without hit count', 'deepseek', { prompt_tokens: N }, false],
    // Gemini omits zero fields (proto3 JSON), so no cachedContentTokenCount means 0 read.
    ['Gemini without cachedContentTokenCount', 'gemini', { promptTokenCount: N }, true],
  ])('%s', (_name, provider, raw, reported) => {
    const usage = usageOf(provider, raw);
    expect(usage.cacheReported).toBe(reported);
    expect(usage.read).toBe(0);
    expect(usage.uncached).toBe(N);
  });

  it('counts a write without a read as reported (SPEC §3: any cache field)', () => {
    const usage = usageOf('openai', { prompt_tokens: 3_000, prompt_tokens_details: { cache_write_tokens: 2_900 } });
    expect(usage).toMatchObject({ uncached: 100, read: 0, write: 2_900, cacheReported: true });
  });
});

describe('Anthropic streams', () => {
  const start = (usage: object) => ({ type: 'message_start', message: { id: 'msg_1', type: 'message', usage } });
  const delta = (usage: object) => ({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage });

  it('takes the final message_delta, whose counts are cumulative', () => {
    const events = [
      start({ input_tokens: 10, cache_read_input_tokens: 900, cache_creation_input_tokens: 0, output_tokens: 1 }),
      delta({ output_tokens: 40 }),
      delta({ output_tokens: 95, cache_read_input_tokens: 1_000 }),
      { type: 'message_stop' },
    ];
    const expected = { uncached: 10, read: 1_000, write: 0, write1h: 0, output: 95, cacheReported: true, writeReported: true };
    expect(usageOf('anthropic', events)).toEqual(expected);
  });

  it('accepts a single message_start event', () => {
    const usage = usageOf('anthropic', start({ input_tokens: 10, cache_read_input_tokens: 900, output_tokens: 1 }));
    expect(usage).toMatchObject({ uncached: 10, read: 900, output: 1 });
  });

  it('uses a message_delta alone when the start is missing', () => {
    const events = [delta({ input_tokens: 10, cache_creation_input_tokens: 700, output_tokens: 30 })];
    const usage = usageOf('anthropic', events);
    expect(usage).toMatchObject({ uncached: 10, write: 700, output: 30, cacheReported: true });
  });

  it('names the event in error paths', () => {
    expect(normalizeUsage('anthropic', [start({ input_tokens: -1 }), delta({ output_tokens: 3 })])).toEqual({
      ok: false,
      field: 'usage[0].message.usage.input_tokens',
      error: 'expected a non-negative integer, got -1',
    });
    expect(normalizeUsage('anthropic', [start({ input_tokens: 1 }), delta({ output_tokens: 'x' })])).toEqual({
      ok: false,
      field: 'usage[1].usage.output_tokens',
      error: 'expected a non-negative integer, got a non-numeric string',
    });
  });
});

describe('responses and streams', () => {
  it('takes the last usage of a Responses event stream', () => {
    const events = [
      { type: 'response.created', sequence_number: 0, response: { id: 'resp_1', status: 'in_progress', usage: null } },
      { type: 'response.output_text.delta', sequence_number: 1, delta: 'Done.' },
      {
        type: 'response.completed',
        sequence_number: 2,
        response: {
          id: 'resp_1',
          status: 'completed',
          usage: { input_tokens: 500, input_tokens_details: { cached_tokens: 384 }, output_tokens: 9 },
        },
      },
    ];
    const expected = { uncached: 116, read: 384, write: 0, write1h: 0, output: 9, cacheReported: true, writeReported: false };
    expect(usageOf('openai', events)).toEqual(expected);
  });

  it.each([
    ['a response with null usage', { id: 'chatcmpl-1', usage: null }, 'usage.usage', 'expected an object, got null'],
    [
      'a stream without usage',
      [{ type: 'ping' }, { usage: null }],
      'usage',
      'expected a stream with at least one event carrying usage, found none',
    ],
    ['a string', 'prompt text', 'usage', 'expected an object, got a non-numeric string'],
    ['a number', 42, 'usage', 'expected an object, got 42'],
    ['null', null, 'usage', 'expected an object, got null'],
  ])('rejects %s', (_name, raw, field, error) => {
    expect(normalizeUsage('openai', raw)).toEqual({ ok: false, field, error });
  });
});

describe('provider names', () => {
  it.each([
    ['anthropic', 'anthropic'],
    ['aws.bedrock', 'bedrock'],
    ['x_ai', 'xai'],
    ['gcp.vertex_ai', 'gemini'],
    ['gcp.gemini', 'gemini'],
    [' Vertex ', 'gemini'],
    ['OpenAI', 'openai'],
    ['qwen', 'dashscope'],
    ['mistral_ai', undefined],
  ])('%s resolves to %s', (name, canonical) => {
    expect(resolveProvider(name)).toBe(canonical);
  });

  it('gives every name to one provider only', () => {
    const names = Object.entries(PROVIDERS).flatMap(([name, info]) => [name, ...info.aliases]);
    expect(new Set(names).size).toBe(names.length);
  });

  it('lets the fields decide when they name another shape', () => {
    // Claude on Vertex, and an Anthropic-compatible endpoint labelled openai.
    const anthropicBody = { input_tokens: 50, cache_read_input_tokens: 10_000 };
    expect(usageOf('gcp.vertex_ai', anthropicBody).uncached).toBe(50);
    expect(usageOf('openai', anthropicBody).uncached).toBe(50);
    // DashScope through an OpenAI-labelled client still has its write counted.
    const dashscope = {
      prompt_tokens: 3_000,
      prompt_tokens_details: { cached_tokens: 0, cache_creation_input_tokens: 2_048 },
    };
    expect(usageOf('openai', dashscope)).toMatchObject({ uncached: 952, write: 2_048 });
  });

  it("names the named provider's missing field when no field is recognisable", () => {
    const missing = 'required field is missing; expected a non-negative integer';
    expect(normalizeUsage('anthropic', { output_tokens: 3 })).toEqual({
      ok: false,
      field: 'usage.input_tokens',
      error: missing,
    });
    expect(normalizeUsage('vertex', { totalTokenCount: 5 })).toEqual({
      ok: false,
      field: 'usage.promptTokenCount',
      error: missing,
    });
    expect(normalizeUsage('my-proxy', { total_tokens: 5 })).toEqual({
      ok: false,
      field: 'usage',
      error:
        'expected a usage object with an input token count' +
        ' (input_tokens, prompt_tokens, promptTokenCount or inputTokens), found none',
    });
  });
});

describe('token counts', () => {
  it('accepts numeric strings', () => {
    const raw = { prompt_tokens: '120', prompt_tokens_details: { cached_tokens: '100' }, completion_tokens: '7' };
    const usage = usageOf('openai', raw);
    expect(usage).toMatchObject({ uncached: 20, read: 100, output: 7 });
  });

  it('turns -0 into 0', () => {
    expect(Object.is(usageOf('anthropic', JSON.parse('{"input_tokens": -0}')).uncached, 0)).toBe(true);
  });

  it('clamps uncached at 0 when an inclusive total is below read + write', () => {
    const raw = { prompt_tokens: 100, prompt_tokens_details: { cached_tokens: 90, cache_write_tokens: 30 } };
    const usage = usageOf('openai', raw);
    expect(usage).toMatchObject({ uncached: 0, read: 90, write: 30 });
  });

  it('clamps a 1h share larger than the write', () => {
    const raw = { input_tokens: 1, cache_creation_input_tokens: 10, cache_creation: { ephemeral_1h_input_tokens: 20 } };
    expect(usageOf('anthropic', raw)).toMatchObject({ write: 10, write1h: 10 });
  });

  const int = (got: string) => `expected a non-negative integer, got ${got}`;
  const obj = (got: string) => `expected an object, got ${got}`;
  const HUGE = '1'.repeat(20);
  it.each([
    ['negative', 'anthropic', { input_tokens: -3 }, 'usage.input_tokens', int('-3')],
    ['float', 'anthropic', { input_tokens: 1.5 }, 'usage.input_tokens', int('1.5')],
    ['text', 'openai', { prompt_tokens: 'many' }, 'usage.prompt_tokens', int('a non-numeric string')],
    ['decimal string', 'openai', { prompt_tokens: '12.5' }, 'usage.prompt_tokens', int('"12.5"')],
    ['infinite string', 'gemini', { promptTokenCount: '1e400' }, 'usage.promptTokenCount', int('a non-numeric string')],
    ['unsafe integer', 'gemini', { promptTokenCount: HUGE }, 'usage.promptTokenCount', int(`"${HUGE}"`)],
    ['boolean', 'openai', { prompt_tokens: true }, 'usage.prompt_tokens', int('true')],
    [
      'object',
      'openai',
      { prompt_tokens: 10, prompt_tokens_details: { cached_tokens: { value: 1 } } },
      'usage.prompt_tokens_details.cached_tokens',
      int('an object'),
    ],
    [
      'array',
      'openai',
      { prompt_tokens: 10, prompt_tokens_details: { cached_tokens: [1] } },
      'usage.prompt_tokens_details.cached_tokens',
      int('an array'),
    ],
    ['details not an object', 'openai', { prompt_tokens: 10, prompt_tokens_details: 7 }, 'usage.prompt_tokens_details', obj('7')],
    ['breakdown not an object', 'anthropic', { input_tokens: 1, cache_creation: 5 }, 'usage.cache_creation', obj('5')],
    ['Gemini thoughts', 'gemini', { promptTokenCount: 10, thoughtsTokenCount: -2 }, 'usage.thoughtsTokenCount', int('-2')],
    [
      'DeepSeek miss',
      'deepseek',
      { prompt_cache_hit_tokens: 5, prompt_cache_miss_tokens: -1 },
      'usage.prompt_cache_miss_tokens',
      int('-1'),
    ],
    ['inside a response', 'openai', { id: 'chatcmpl-1', usage: { prompt_tokens: -1 } }, 'usage.usage.prompt_tokens', int('-1')],
    [
      'cacheDetails not an array',
      'bedrock',
      { inputTokens: 1, cacheDetails: {} },
      'usage.cacheDetails',
      'expected an array, got an object',
    ],
    ['cacheDetails entry', 'bedrock', { inputTokens: 1, cacheDetails: [5] }, 'usage.cacheDetails[0]', obj('5')],
    [
      'cacheDetails count',
      'bedrock',
      { inputTokens: 1, cacheDetails: [{ ttl: '1h', inputTokens: -1 }] },
      'usage.cacheDetails[0].inputTokens',
      int('-1'),
    ],
    [
      'missing input count',
      'anthropic',
      { cache_read_input_tokens: 5 },
      'usage.input_tokens',
      'required field is missing; expected a non-negative integer',
    ],
  ])('rejects %s', (_name, provider, raw, field, error) => {
    expect(normalizeUsage(provider, raw)).toEqual({ ok: false, field, error });
  });
});

describe('normalizeReported', () => {
  it('takes the normalised fields as they are', () => {
    const reported = {
      uncachedInputTokens: 120,
      cacheReadInputTokens: 48_000,
      cacheWriteInputTokens: 900,
      cacheWrite1hInputTokens: 0,
      outputTokens: 310,
    };
    expect(normalizeReported(reported)).toEqual({
      ok: true,
      usage: { uncached: 120, read: 48_000, write: 900, write1h: 0, output: 310, cacheReported: true, writeReported: true },
    });
  });

  it.each([
    ['no cache field', { uncachedInputTokens: 120, outputTokens: 3 }, false],
    ['null cache fields', { uncachedInputTokens: 120, cacheReadInputTokens: null, cacheWriteInputTokens: null }, false],
    ['a zero read', { uncachedInputTokens: 120, cacheReadInputTokens: 0 }, true],
    ['a write only', { uncachedInputTokens: '120', cacheWriteInputTokens: '900' }, true],
  ])('reports the cache with %s: %s', (_name, reported, cacheReported) => {
    const result = normalizeReported(reported);
    expect(result).toMatchObject({ ok: true, usage: { uncached: 120, read: 0, cacheReported } });
  });

  it.each([
    [{ cacheReadInputTokens: -1 }, 'cacheReadInputTokens', 'expected a non-negative integer, got -1'],
    [{ outputTokens: 2.5 }, 'outputTokens', 'expected a non-negative integer, got 2.5'],
    [
      { cacheWriteInputTokens: 900, cacheWrite1hInputTokens: 1_000 },
      'cacheWrite1hInputTokens',
      'expected at most cacheWriteInputTokens (900), got 1000',
    ],
    [{ cacheWrite1hInputTokens: 5 }, 'cacheWrite1hInputTokens', 'expected at most cacheWriteInputTokens (0), got 5'],
  ])('rejects %j', (reported, field, error) => {
    expect(normalizeReported(reported)).toEqual({ ok: false, field, error });
  });
});
