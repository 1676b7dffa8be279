import { describe, expect, it } from 'vitest';
import { hashString } from '../../src/core/hash.js';
import { buildSnapshot } from '../../src/core/snapshot/index.js';
import { contentOf, loadRequest, snapshotOf, type Body } from './request-fixtures.js';

describe('OpenAI Chat Completions snapshot', () => {
  const body = (): Body => loadRequest('openai-chat');
  const base = snapshotOf(body());

  it('reads the leading system/developer run as system blocks and hashes the cache key', () => {
    expect(base).toMatchObject({
      model: 'gpt-4.1-2025-04-14',
      tools: [{ name: 'run_tests' }, { name: 'read_file' }, { name: 'apply_patch' }],
      cacheControl: { enabled: true, scope: 'auto', ttl: '24h', key: hashString('tenant-42:repo-cachebreak') },
    });
    expect(base.systemBlockHashes).toHaveLength(2);
    expect(base.messageHashes).toHaveLength(4);
  });

  it('a system message after the conversation started is a message', () => {
    const changed = body();
    changed.messages.push({ role: 'system', content: 'Tests now pass.' });
    const snapshot = snapshotOf(changed);
    expect(snapshot.systemHash).toBe(base.systemHash);
    expect(snapshot.messageHashes).toHaveLength(5);
  });

  it('maps retention and cache options to a TTL', () => {
    const ttl = (edit: (b: Body) => void): string | undefined => {
      const changed = body();
      edit(changed);
      return snapshotOf(changed).cacheControl?.ttl;
    };
    expect(ttl((b) => (b.prompt_cache_retention = 'in_memory'))).toBe('5m');
    expect(ttl((b) => (b.prompt_cache_retention = 'forever'))).toBe('forever');
    // Names of Object.prototype's members are values like any other.
    for (const name of ['constructor', '__proto__', 'toString']) expect(ttl((b) => (b.prompt_cache_retention = name))).toBe(name);
    expect(ttl((b) => delete b.prompt_cache_retention)).toBeUndefined();
    expect(ttl((b) => (b.prompt_cache_options = { ttl: '30m' }))).toBe('30m');
  });

  it('in explicit mode only breakpoints cache: none means caching is off', () => {
    const explicit = body();
    explicit.prompt_cache_options = { mode: 'explicit' };
    expect(snapshotOf(explicit).cacheControl).toEqual({ enabled: false, ttl: '24h', key: base.cacheControl?.key });

    explicit.messages[1].content[0].prompt_cache_breakpoint = { mode: 'explicit' };
    expect(snapshotOf(explicit).cacheControl).toEqual({
      enabled: true,
      scope: 'tools+system',
      markers: ['system:1'],
      ttl: '24h',
      key: base.cacheControl?.key,
    });
  });

  it('a breakpoint-only change changes cacheControl and no content hash', () => {
    const changed = body();
    changed.messages[2].content = [
      { type: 'text', text: changed.messages[2].content, prompt_cache_breakpoint: { mode: 'explicit' } },
    ];
    const snapshot = snapshotOf(changed);
    expect(snapshot.cacheControl?.markers).toEqual(['messages:0']);
    expect(contentOf(snapshot)).toEqual(contentOf(base));
  });

  it('reads cache_control parts and top-level cache_control (DashScope, OpenRouter)', () => {
    const changed = body();
    changed.messages[0].content = [{ type: 'text', text: changed.messages[0].content, cache_control: { type: 'ephemeral' } }];
    changed.cache_control = { type: 'ephemeral' };
    const snapshot = snapshotOf(changed);
    expect(snapshot.cacheControl?.markers).toEqual(['system:0@5m', 'messages:3@5m']);
    expect(contentOf(snapshot)).toEqual(contentOf(base));
  });

  it('changing a tool description changes exactly that tool’s schemaHash', () => {
    const changed = body();
    changed.tools[1].function.description = 'Read a file.';
    const hashes = snapshotOf(changed).tools?.map((t) => t.schemaHash);
    expect(hashes?.map((h, i) => h !== base.tools?.[i]?.schemaHash)).toEqual([false, true, false]);
  });

  it('rejects malformed cache settings and tools with the field path', () => {
    const cases: Array<[(b: Body) => void, string]> = [
      [(b) => (b.prompt_cache_key = 42), 'prompt_cache_key: expected a string'],
      [(b) => (b.prompt_cache_retention = 1), 'prompt_cache_retention: expected a string'],
      [(b) => (b.prompt_cache_options = 'explicit'), 'prompt_cache_options: expected an object'],
      [(b) => (b.prompt_cache_options = { ttl: 1800 }), 'prompt_cache_options.ttl: expected a string'],
      [(b) => (b.tools[2].function = 'apply_patch'), 'tools[2].function: expected an object'],
      [(b) => delete b.tools[0].function.name, 'tools[0].function.name: expected a string'],
      [(b) => (b.messages[5] = 'Fix it'), 'messages[5]: expected an object'],
    ];
    for (const [edit, error] of cases) {
      const broken = body();
      edit(broken);
      const result = buildSnapshot(broken, 'openai-chat');
      expect(result.ok ? undefined : result.error).toBe(error);
    }
  });
});

describe('OpenAI Responses snapshot', () => {
  const body = (): Body => loadRequest('openai-responses');
  const base = snapshotOf(body());

  it('reads instructions and leading developer items as system, built-in tools by type', () => {
    expect(base).toMatchObject({
      model: 'gpt-5.6',
      tools: [{ name: 'get_release' }, { name: 'web_search' }, { name: 'mcp:github' }],
      cacheControl: { enabled: true, scope: 'auto', ttl: '30m', key: hashString('release-bot-main'), markers: ['messages:0'] },
    });
    expect(base.systemBlockHashes).toHaveLength(2);
    expect(base.messageHashes).toHaveLength(5);
  });

  it('changing only the instructions changes only the first system block', () => {
    const changed = body();
    changed.instructions += ' Use British spelling.';
    const snapshot = snapshotOf(changed);
    expect(snapshot.systemBlockHashes?.[0]).not.toBe(base.systemBlockHashes?.[0]);
    expect(snapshot.systemBlockHashes?.[1]).toBe(base.systemBlockHashes?.[1]);
    expect(snapshot.messageHashes).toEqual(base.messageHashes);
  });

  it('a string input is one user message, hashed like its input_text form', () => {
    const asString = snapshotOf({ model: 'gpt-5.6', input: 'Summarise #101.' }, 'openai-responses');
    const asItems = snapshotOf(
      { model: 'gpt-5.6', input: [{ role: 'user', content: [{ type: 'input_text', text: 'Summarise #101.' }] }] },
      'openai-responses',
    );
    // Hashed alike; the size estimate follows the JSON as sent.
    expect({ ...asString, prefixChars: undefined }).toEqual({ ...asItems, prefixChars: undefined });
    expect(asString.messageHashes).toHaveLength(1);
    expect(asString.systemBlockHashes).toEqual([]);
    expect(asString.cacheControl).toEqual({ enabled: true, scope: 'auto' });
  });

  it('an assistant string is output_text', () => {
    const asString = snapshotOf({ model: 'gpt-5.6', input: [{ role: 'assistant', content: 'Done.' }] }, 'openai-responses');
    const asParts = snapshotOf(
      { model: 'gpt-5.6', input: [{ role: 'assistant', content: [{ type: 'output_text', text: 'Done.' }] }] },
      'openai-responses',
    );
    expect(asString.messageHashes).toEqual(asParts.messageHashes);
  });

  it('rejects malformed instructions and input', () => {
    expect(buildSnapshot({ model: 'gpt-5.6', instructions: ['Be brief.'] }, 'openai-responses')).toMatchObject({
      ok: false,
      field: 'instructions',
    });
    expect(buildSnapshot({ model: 'gpt-5.6', input: 5 }, 'openai-responses')).toMatchObject({
      ok: false,
      error: 'input: expected an array',
    });
  });
});
