import { describe, expect, it } from 'vitest';
import { hashString } from '../../src/core/hash.js';
import { buildSnapshot } from '../../src/core/snapshot/index.js';
import { loadRequest, snapshotOf, type Body } from './request-fixtures.js';

const body = (): Body => loadRequest('gemini');
const options = { model: 'models/gemini-2.5-pro' };
const base = snapshotOf(body(), 'gemini', options);

describe('Gemini generateContent snapshot', () => {
  it('reads systemInstruction parts, each function declaration and built-in tool, and the explicit cache', () => {
    expect(base).toMatchObject({
      model: 'gemini-2.5-pro',
      tools: [{ name: 'read_file' }, { name: 'run_shell_command' }, { name: 'search_file_content' }, { name: 'googleSearch' }],
      cacheControl: { enabled: true, scope: 'cachedContent', key: hashString('cachedContents/7f3kq9x2mzr1') },
    });
    expect(base.systemBlockHashes).toHaveLength(2);
    expect(base.messageHashes).toHaveLength(3);
  });

  it('takes the model from the URL, in any of its spellings, and says so when there is none', () => {
    const model = (name: string): string => snapshotOf(body(), 'gemini', { model: name }).model;
    expect(model('gemini-2.5-pro')).toBe('gemini-2.5-pro');
    expect(model('projects/p1/locations/us-central1/publishers/google/models/gemini-2.5-pro')).toBe('gemini-2.5-pro');
    expect(snapshotOf({ ...body(), model: 'gemini-2.5-flash' }, 'gemini').model).toBe('gemini-2.5-flash');
    expect(buildSnapshot(body(), 'gemini')).toEqual({
      ok: false,
      field: 'model',
      error: 'model: missing; when the URL names the model, pass it as options.model',
    });
  });

  it('reads snake_case bodies the same as camelCase ones', () => {
    const { systemInstruction, cachedContent, tools, ...rest } = body();
    const snake = {
      ...rest,
      system_instruction: systemInstruction,
      cached_content: cachedContent,
      tools: [{ function_declarations: tools[0].functionDeclarations }, { google_search: {} }],
    };
    const snapshot = snapshotOf(snake, undefined, options);
    expect(snapshot.tools?.map((t) => t.name)).toEqual(['read_file', 'run_shell_command', 'search_file_content', 'google_search']);
    // The size estimate follows the JSON as sent, snake_case names and the extra tool included.
    expect({ ...snapshot, tools: snapshot.tools?.slice(0, 3), prefixChars: undefined }).toEqual({ ...base, tools: base.tools?.slice(0, 3), prefixChars: undefined });
  });

  it('uses implicit caching without cachedContent; a different cache changes the key only', () => {
    const implicit = body();
    delete implicit.cachedContent;
    expect(snapshotOf(implicit, 'gemini', options).cacheControl).toEqual({ enabled: true, scope: 'auto' });

    const other = body();
    other.cachedContent = 'cachedContents/0000other';
    const snapshot = snapshotOf(other, 'gemini', options);
    expect(snapshot.cacheControl?.key).not.toBe(base.cacheControl?.key);
    expect({ ...snapshot, cacheControl: undefined }).toEqual({ ...base, cacheControl: undefined });
  });

  it('changing a declaration changes exactly that tool’s schemaHash', () => {
    const changed = body();
    changed.tools[0].functionDeclarations[1].description = 'Runs a shell command.';
    const hashes = snapshotOf(changed, 'gemini', options).tools?.map((t) => t.schemaHash);
    expect(hashes?.map((h, i) => h !== base.tools?.[i]?.schemaHash)).toEqual([false, true, false, false]);
  });

  it('reads a plain-string systemInstruction as one block', () => {
    const changed = body();
    changed.systemInstruction = 'You are terse.';
    expect(snapshotOf(changed, 'gemini', options).systemBlockHashes).toHaveLength(1);
  });

  it('rejects malformed contents, tools and cache names with the field path', () => {
    const cases: Array<[(b: Body) => void, string]> = [
      [(b) => (b.contents[1] = 'hello'), 'contents[1]: expected an object'],
      [(b) => delete b.tools[0].functionDeclarations[2].name, 'tools[0].functionDeclarations[2].name: expected a string'],
      [(b) => (b.tools[0].functionDeclarations = {}), 'tools[0].functionDeclarations: expected an array'],
      [(b) => (b.tools[1] = { description: 'search', googleSearch: {} }), 'tools[1].name: expected a string'],
      [(b) => (b.cachedContent = 7), 'cachedContent: expected a string'],
      [(b) => (b.systemInstruction = 7), 'systemInstruction: expected a string or an array of blocks'],
    ];
    for (const [edit, error] of cases) {
      const broken = body();
      edit(broken);
      const result = buildSnapshot(broken, 'gemini', options);
      expect(result.ok ? undefined : result.error).toBe(error);
    }
  });
});
