// --prices and --min-cacheable as the commands read them: the file's two
// price forms over the genai-prices database, the per-provider minimums, the
// errors that name what is wrong, and detectionOf handing both to detection.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importCommand } from '../../src/cli/import.js';
import { serveCommand } from '../../src/cli/serve.js';
import { tailCommand } from '../../src/cli/tail.js';
import { ConfigError, detectionOf, OPTIONS, parseOptions } from '../../src/config.js';
import { AUTOMATIC_CACHING, minCacheable } from '../../src/core/caching.js';
import { extraCostUsd } from '../../src/core/prices.js';
import { databasePrices } from '../../src/prices/index.js';
import { tempDir } from '../helpers.js';
import { cli } from './run.js';

const parse = (argv: string[], env: Record<string, string> = {}) => parseOptions(serveCommand.options, argv, env).values;

const SONNET_4_5 = { input: 3, cacheRead: 0.3, cacheWrite: 3.75, cacheWrite1h: 6 };

/** A price file with this content, in a fresh directory. */
function priceFile(content: unknown): string {
  const file = join(tempDir(), 'prices.json');
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
}

function errorOf(argv: string[], env: Record<string, string> = {}): string {
  try {
    parse(argv, env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('expected a ConfigError');
}

describe('--prices', () => {
  it('is offered wherever detection runs, with the database as its default', () => {
    for (const command of [serveCommand, importCommand, tailCommand]) {
      expect(command.options, command.name).toEqual(expect.arrayContaining(['min-miss-tokens', 'miss-ratio', 'min-cacheable', 'prices']));
    }
    expect(OPTIONS.prices.shownDefault).toBe('genai-prices database');
    expect(OPTIONS.prices.default).toEqual({});
  });

  it('prices a model the database lacks, wins over the database, and leaves it the rest', () => {
    const file = priceFile({
      'acme-coder': { input: 10, cacheRead: 2, cacheWrite: 15 },
      'acme-legacy': { inputUsdPerMTok: 10, readMultiplier: 0.2, write5mMultiplier: 1.5, write1hMultiplier: 2 },
      'claude-opus-4-1': { input: 10, cacheRead: 1, cacheWrite: 12.5, cacheWrite1h: 20 },
    });
    const { prices } = detectionOf(parse(['--prices', file]));
    expect(databasePrices('acme-coder-2', 'anthropic')).toBeUndefined();
    expect(prices('acme-coder-2', 'anthropic')).toEqual({ input: 10, cacheRead: 2, cacheWrite: 15, cacheWrite1h: 15 });
    expect(prices('ACME-LEGACY-1', 'openai')).toEqual({ input: 10, cacheRead: 2, cacheWrite: 15, cacheWrite1h: 20 });
    expect(prices('us.anthropic.claude-opus-4-1-20250805-v1:0', 'bedrock')?.input).toBe(10);
    expect(prices('claude-sonnet-4-5', 'anthropic')).toEqual(SONNET_4_5);
    expect(prices('gpt-4o-mini', 'openai')).toEqual({ input: 0.15, cacheRead: 0.075, cacheWrite: 0.15, cacheWrite1h: 0.15 });
    expect(prices('acme-chat', 'openai')).toBeUndefined();
    // SPEC §4.10 on these prices: 48,900 tokens written at $15 instead of read at $2 per MTok.
    expect(extraCostUsd(prices('acme-coder-2', 'anthropic')!, 48_900, 'explicit', { write: 48_900, write1h: 0 })).toBe(0.6357);
  });

  it('leaves detection the database alone without a file', () => {
    const { prices } = detectionOf(parse([]));
    expect(prices).toBe(databasePrices);
    expect(prices('claude-sonnet-4-5-20250929', 'anthropic')).toEqual(SONNET_4_5);
    expect(prices('acme-coder-2', 'anthropic')).toBeUndefined();
  });

  it('names the file, the model and the field of a bad price, from the flag or the variable', () => {
    const bad = priceFile({ 'acme-coder': { input: 3, cacheRead: 'cheap' } });
    expect(errorOf(['--prices', bad])).toBe(`--prices: "${bad}": model "acme-coder": cacheRead must be a non-negative number, got "cheap"`);
    expect(errorOf([], { CACHEBREAK_PRICES: bad })).toBe(
      `CACHEBREAK_PRICES: "${bad}": model "acme-coder": cacheRead must be a non-negative number, got "cheap"`,
    );
    const typo = priceFile({ 'acme-coder': { inputUsdPerMtok: 3 } });
    expect(errorOf(['--prices', typo])).toMatch(new RegExp(`^--prices: "${typo}": model "acme-coder": unknown field "inputUsdPerMtok"; expected input, cacheRead`));
    const mixed = priceFile({ ok: { input: 1 }, 'acme-coder': { input: 3, write1hMultiplier: 2 } });
    expect(errorOf(['--prices', mixed])).toMatch(new RegExp(`^--prices: "${mixed}": model "acme-coder": mixes input with write1hMultiplier`));
    const missing = priceFile({ 'acme-coder': { cacheRead: 0.3 } });
    expect(errorOf(['--prices', missing])).toMatch(new RegExp(`^--prices: "${missing}": model "acme-coder": input is missing`));
    const list = priceFile([{ 'acme-coder': { input: 3 } }]);
    expect(errorOf(['--prices', list])).toMatch(new RegExp(`^--prices: "${list}": expected an object of model id \\(or id prefix\\) → price`));
  });

  it('names a file it cannot read or parse', () => {
    const absent = join(tempDir(), 'absent.json');
    expect(errorOf(['--prices', absent])).toMatch(new RegExp(`^--prices: cannot read "${absent}" as JSON \\(ENOENT`));
    const broken = priceFile('{"acme-coder": {"input": 3,}}');
    expect(errorOf(['--prices', broken])).toMatch(new RegExp(`^--prices: cannot read "${broken}" as JSON \\(.+\\)$`));
  });

  it('stops a command with exit code 2 and the message, before it opens anything', async () => {
    const bad = priceFile({ 'acme-coder': { input: -3 } });
    const db = join(tempDir(), 'x.db');
    expect(await cli(['import', '--db', db, '--prices', bad, 'events.ndjson'])).toEqual({
      code: 2,
      stdout: '',
      stderr: `cachebreak import: --prices: "${bad}": model "acme-coder": input must be a non-negative number, got -3\n`,
    });
  });
});

describe('--min-cacheable', () => {
  it('reads provider=tokens pairs, case and spaces aside; empty by default, leaving the built-in minimums', () => {
    expect(OPTIONS['min-cacheable'].env).toBe('CACHEBREAK_MIN_CACHEABLE');
    expect(parse([])['min-cacheable']).toEqual({});
    expect(parse(['--min-cacheable', 'openai=1024,deepseek=64,other=1024'])['min-cacheable']).toEqual({ openai: 1024, deepseek: 64, other: 1024 });
    expect(parse(['--min-cacheable= Gemini = 4096 , xai=1,'])['min-cacheable']).toEqual({ gemini: 4096, xai: 1 });
    const every = Object.keys(AUTOMATIC_CACHING).map((key, i) => `${key}=${100 + i}`).join(',');
    expect(Object.keys(parse(['--min-cacheable', every])['min-cacheable']).sort()).toEqual(
      ['dashscope', 'deepseek', 'gemini', 'openai', 'openrouter', 'other', 'xai'],
    );
  });

  it('reaches detection, where the core reads it by provider', () => {
    const detection = detectionOf(parse(['--min-cacheable', 'openai=2048,other=512']));
    expect(detection.minCacheable).toEqual({ openai: 2048, other: 512 });
    // Azure is OpenAI; an unknown provider, and the explicit ones, are "other".
    expect(minCacheable('azure', 'gpt-4o', detection.minCacheable)).toBe(2048);
    expect(minCacheable('mistral', 'mistral-large', detection.minCacheable)).toBe(512);
    expect(minCacheable(undefined, undefined, detection.minCacheable)).toBe(512);
    // Not overridden: the built-in minimum.
    expect(minCacheable('deepseek', 'deepseek-chat', detection.minCacheable)).toBe(64);
    expect(detectionOf(parse([])).minCacheable).toEqual({});
  });

  it('reads provider/model=tokens pairs too, by model family, a trailing * covering every model it starts', () => {
    expect(parse(['--min-cacheable', 'openai=2048,Gemini/Gemini-3-Pro*=4096,openai/gpt-4o-2024-08-06=512'])['min-cacheable']).toEqual({
      openai: 2048,
      'gemini/gemini-3-pro*': 4096,
      'openai/gpt-4o': 512,
    });
    const detection = detectionOf(parse(['--min-cacheable', 'openai=2048,openai/gpt-4o*=4096,openai/gpt-4o-mini=512']));
    expect(minCacheable('openai', 'gpt-4o-2024-11-20', detection.minCacheable)).toBe(4096);
    expect(minCacheable('azure', 'gpt-4o-mini', detection.minCacheable)).toBe(512);
    expect(minCacheable('openai', 'gpt-4.1', detection.minCacheable)).toBe(2048);
  });

  it('names what is wrong: the pair, the provider, the model or its number', () => {
    const keys = 'openai, xai, gemini, dashscope, deepseek, openrouter, other';
    const syntax = 'expected provider=tokens or provider/model=tokens pairs separated by commas, such as openai=1024,gemini/gemini-3-pro*=4096';
    const model = 'expected a model after the provider, a name such as gpt-4o or the start of one followed by *, such as gemini-3-pro*';
    expect(errorOf(['--min-cacheable', 'vertex/gemini-3-pro=4096'])).toBe(`--min-cacheable: unknown provider "vertex"; expected one of ${keys}`);
    expect(errorOf(['--min-cacheable', 'openai/=4096'])).toBe(`--min-cacheable: "openai/": ${model}`);
    expect(errorOf(['--min-cacheable', 'openai/gpt*4o=4096'])).toBe(`--min-cacheable: "openai/gpt*4o": ${model}`);
    expect(errorOf(['--min-cacheable', 'openai/gpt-4o=1,openai/GPT-4o-2024-08-06=2'])).toBe('--min-cacheable: openai/gpt-4o is given twice');
    expect(errorOf(['--min-cacheable', 'gemini/gemini-3-pro*=lots'])).toBe('--min-cacheable: gemini/gemini-3-pro*: expected a whole number from 1 to 10000000, got "lots"');
    expect(errorOf(['--min-cacheable', 'anthropic=1024'])).toBe(`--min-cacheable: unknown provider "anthropic"; expected one of ${keys}`);
    expect(errorOf([], { CACHEBREAK_MIN_CACHEABLE: 'azure=1024' })).toBe(`CACHEBREAK_MIN_CACHEABLE: unknown provider "azure"; expected one of ${keys}`);
    expect(errorOf(['--min-cacheable', 'openai=0'])).toBe('--min-cacheable: openai: expected a whole number from 1 to 10000000, got "0"');
    expect(errorOf(['--min-cacheable', 'openai=1k'])).toBe('--min-cacheable: openai: expected a whole number from 1 to 10000000, got "1k"');
    expect(errorOf(['--min-cacheable', 'deepseek=64,openai='])).toBe('--min-cacheable: openai: expected a whole number from 1 to 10000000, got ""');
    expect(errorOf(['--min-cacheable', 'deepseek=1.5'])).toBe('--min-cacheable: deepseek: expected a whole number from 1 to 10000000, got "1.5"');
    expect(errorOf(['--min-cacheable', 'openai=1024,OpenAI=2048'])).toBe('--min-cacheable: openai is given twice');
    expect(errorOf(['--min-cacheable', 'openai:1024'])).toBe(`--min-cacheable: ${syntax}, got "openai:1024"`);
    expect(errorOf(['--min-cacheable', ' , '])).toBe(`--min-cacheable: ${syntax}`);
  });
});
