import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { hashContent } from '../../src/core/hash.js';
import type { SnapshotContent } from '../../src/core/types.js';
import {
  buildSnapshot,
  detectRequestApi,
  readRawSystem,
  readRawTools,
  SnapshotError,
  type RequestApi,
} from '../../src/core/snapshot/index.js';
import { contentStrings, loadRequest, REQUEST_FIXTURES, snapshotOf } from './request-fixtures.js';

const EXPECTED_API: Record<(typeof REQUEST_FIXTURES)[number], RequestApi> = {
  'claude-code': 'anthropic',
  'openai-chat': 'openai-chat',
  'openai-responses': 'openai-responses',
  gemini: 'gemini',
  'bedrock-converse': 'bedrock',
};

const OPTIONS = { gemini: { model: 'gemini-2.5-pro' } } as const;

function hashesOf(snapshot: SnapshotContent): string[] {
  return [
    snapshot.systemHash,
    ...(snapshot.systemBlockHashes ?? []),
    ...(snapshot.tools ?? []).map((tool) => tool.schemaHash),
    ...(snapshot.messageHashes ?? []),
    snapshot.cacheControl?.key,
  ].filter((hash) => hash !== undefined);
}

describe.each(REQUEST_FIXTURES)('%s fixture', (name) => {
  const body = loadRequest(name);
  const snapshot = snapshotOf(body, undefined, name === 'gemini' ? OPTIONS.gemini : {});

  it('is detected from its shape, giving the same snapshot as naming the API', () => {
    expect(detectRequestApi(body)).toBe(EXPECTED_API[name]);
    expect(snapshotOf(body, EXPECTED_API[name], name === 'gemini' ? OPTIONS.gemini : {})).toEqual(snapshot);
  });

  it('keeps no content: no string of the prompt, system or tool descriptions is in the output', () => {
    const out = JSON.stringify(snapshot);
    // Tool names are shown on purpose; a schema word inside one ("command" in run_shell_command) is no leak.
    const names = snapshot.tools?.map((tool) => tool.name) ?? [];
    const strings = contentStrings(body).filter((s) => s.length >= 6 && !names.some((n) => n.includes(s)));
    expect(strings.length).toBeGreaterThan(10);
    for (const s of strings) expect(out).not.toContain(s);
  });

  it('writes every hash as 16 lowercase hex digits', () => {
    const hashes = hashesOf(snapshot);
    expect(hashes.length).toBeGreaterThan(5);
    for (const hash of hashes) expect(hash).toMatch(/^[0-9a-f]{16}$/);
  });
});

describe('detectRequestApi', () => {
  it.each<[unknown, RequestApi | undefined]>([
    [null, undefined],
    [[], undefined],
    [{ model: 'x' }, undefined],
    [{ model: 'x', messages: {} }, undefined],
    [{ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }, 'openai-chat'],
    [{ model: 'gpt-5', instructions: 'Be brief.' }, 'openai-responses'],
    [{ contents: [] }, 'gemini'],
    [{ anthropic_version: 'bedrock-2023-05-31', messages: [] }, 'anthropic'],
    [{ model: 'claude', messages: [], tools: [{ name: 'get_weather', input_schema: {} }] }, 'anthropic'],
    [{ model: 'claude', messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't' }] }] }, 'anthropic'],
    [{ model: 'claude', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] }, 'openai-chat'],
    [{ messages: [{ role: 'user', content: [{ text: 'hi' }] }] }, 'bedrock'],
    [{ messages: [], system: [{ text: 'Be kind.' }] }, 'bedrock'],
    [{ messages: [], inferenceConfig: { maxTokens: 10 } }, 'bedrock'],
  ])('%j → %s', (body, api) => {
    expect(detectRequestApi(body)).toBe(api);
  });
});

describe('buildSnapshot errors', () => {
  it.each<[unknown, RequestApi | undefined, string, string]>([
    ['{"model":"x"}', undefined, 'body', 'body: expected a JSON object'],
    [{ model: 'x' }, undefined, 'body', 'body: cannot tell which API the request is for; pass api'],
    [{ model: 'x', messages: [] }, 'mistral' as RequestApi, 'api', 'api: unknown request API "mistral"'],
    [{ model: 'x', messages: [] }, 'toString' as RequestApi, 'api', 'api: unknown request API "toString"'],
    [{ model: 7, messages: [] }, 'openai-chat', 'model', 'model: expected a non-empty string'],
  ])('%j (%s) → %s', (body, api, field, error) => {
    expect(buildSnapshot(body, api)).toEqual({ ok: false, field, error });
  });

  it('lets errors that are not about the body through', () => {
    const body = {
      messages: [],
      get model(): string {
        throw new RangeError('getter failed');
      },
    };
    expect(() => buildSnapshot(body, 'anthropic')).toThrow(RangeError);
  });
});

describe('readRawSystem', () => {
  it('reads a string as one text block, and leaves cache_control out of the hashes as a marker of its block', () => {
    const { markers, ...fromString } = readRawSystem('You are terse.');
    expect(markers).toEqual([]);
    const marked = readRawSystem([{ type: 'text', text: 'You are terse.', cache_control: { type: 'ephemeral' } }]);
    expect(marked).toEqual({ ...fromString, markers: ['system:0@5m'] });
    expect(fromString.systemBlockHashes).toEqual([hashContent({ type: 'text', text: 'You are terse.' })]);
  });

  it('hashes each block and the whole', () => {
    const blocks = [
      { type: 'text', text: 'billing header' },
      { type: 'text', text: 'You are Claude Code.', cache_control: { type: 'ephemeral', ttl: '1h' } },
    ];
    const hashes = readRawSystem(blocks);
    expect(hashes.systemBlockHashes).toHaveLength(2);
    expect(hashes.systemHash).toBe(hashContent(blocks));
    expect(hashes.markers).toEqual(['system:1@1h']);
  });

  it('reads a Gemini Content by its parts, and hashes other shapes whole', () => {
    expect(readRawSystem({ role: 'system', parts: [{ text: 'a' }, { text: 'b' }] }).systemBlockHashes).toHaveLength(2);
    expect(readRawSystem({ text: 'a' })).toEqual({ systemHash: hashContent({ text: 'a' }), markers: [] });
    expect(readRawSystem(undefined)).toEqual({ systemHash: hashContent([]), systemBlockHashes: [], markers: [] });
  });

  it('throws a SnapshotError on a malformed marker', () => {
    expect(() => readRawSystem([{ type: 'text', text: 'a', cache_control: 'yes' }])).toThrow(
      new SnapshotError('system[0].cache_control', 'expected an object'),
    );
  });
});

describe('readRawTools', () => {
  it('names tools of every API in the order sent, without deferred tools or cachePoints', () => {
    const raw = [
      { name: 'Read', input_schema: { type: 'object' } },
      { type: 'function', function: { name: 'run_tests', parameters: {} } },
      { type: 'custom', custom: { name: 'apply_grammar' } },
      { toolSpec: { name: 'lookup_invoice', inputSchema: { json: {} } } },
      { cachePoint: { type: 'default' } },
      { functionDeclarations: [{ name: 'read_file' }, { name: 'glob' }], codeExecution: {} },
      { type: 'web_search' },
      { type: 'mcp_toolset', mcp_server_name: 'linear' },
      { name: 'create_issue', input_schema: {}, defer_loading: true },
    ];
    const { tools: refs, markers } = readRawTools(raw);
    // The cachePoint ends the tool before it (the fourth): a marker of that position.
    expect(markers).toEqual(['tools:3@5m']);
    expect(refs.map((t) => t.name)).toEqual([
      'Read',
      'run_tests',
      'apply_grammar',
      'lookup_invoice',
      'read_file',
      'glob',
      'codeExecution',
      'web_search',
      'mcp_toolset:linear',
    ]);
    expect(refs[0]?.schemaHash).toBe(hashContent(raw[0]));
    expect(refs[4]?.schemaHash).toBe(hashContent({ name: 'read_file' }));
  });

  it('leaves cache_control out of the schema hash, as a marker of the tool it sits on', () => {
    const plain = readRawTools([{ name: 'Read', input_schema: {} }]);
    const marked = readRawTools([{ name: 'Read', input_schema: {}, cache_control: { type: 'ephemeral', ttl: '1h' } }]);
    expect(marked.tools).toEqual(plain.tools);
    expect([plain.markers, marked.markers]).toEqual([[], ['tools@1h']]);
  });

  it('throws a SnapshotError naming the tool without a name', () => {
    expect(() => readRawTools([{ name: 'Read' }, { description: 'no name', input_schema: {} }])).toThrow(
      'toolDefinitions[1].name: expected a string',
    );
  });
});

describe('src/core/snapshot', () => {
  it('is pure: imports only its own files and the core', () => {
    const dir = new URL('../../src/core/snapshot/', import.meta.url);
    for (const file of readdirSync(dir)) {
      const source = readFileSync(new URL(file, dir), 'utf8');
      for (const [, from] of source.matchAll(/from '([^']+)'/g)) expect(from, file).toMatch(/^\.\.?\/[\w./-]+\.js$/);
    }
  });
});
