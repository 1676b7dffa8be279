import { describe, expect, it } from 'vitest';
import { hashContent } from '../../src/core/hash.js';
import { buildSnapshot } from '../../src/core/snapshot/index.js';
import { contentOf, loadRequest, snapshotOf, type Body } from './request-fixtures.js';

const body = (): Body => loadRequest('claude-code');
const base = snapshotOf(body());

describe('Anthropic Messages snapshot', () => {
  it('reads a Claude Code body: 3 system blocks, tools in order, markers from system and the last message', () => {
    expect(base.model).toBe('claude-sonnet-4-5-20250929');
    expect(base.systemBlockHashes).toHaveLength(3);
    expect(base.systemHash).toBe(hashContent(body().system.map(({ cache_control: _, ...block }: Body) => block)));
    expect(base.tools?.map((t) => t.name)).toEqual([
      'Task',
      'Bash',
      'Glob',
      'Grep',
      'Read',
      'Edit',
      'mcp__filesystem__read_tree',
      'mcp__github__search_issues',
      'tool_search_tool_regex',
    ]);
    expect(base.cacheControl).toEqual({
      enabled: true,
      ttl: '5m',
      scope: 'tools+system+messages',
      // Absolute positions: the marker sits on the fifth message.
      markers: ['system:1@1h', 'system:2@1h', 'messages:4@5m'],
    });
    // The mid-conversation role:"system" message is just a message.
    expect(base.messageHashes).toHaveLength(5);
  });

  it('a cache_control-only change changes cacheControl and no content hash', () => {
    const edits: Array<(b: Body) => void> = [
      (b) => delete b.system[2].cache_control,
      (b) => (b.system[1].cache_control.ttl = '5m'),
      (b) => (b.system[2].cache_control.scope = 'global'),
      (b) => (b.tools[7].cache_control = { type: 'ephemeral' }),
      (b) => (b.messages[0].content[1].cache_control = { type: 'ephemeral' }),
      (b) => (b.cache_control = { type: 'ephemeral' }),
      (b) => delete b.messages[4].content[0].cache_control,
    ];
    for (const edit of edits) {
      const changed = body();
      edit(changed);
      const snapshot = snapshotOf(changed);
      expect(snapshot.cacheControl).not.toEqual(base.cacheControl);
      expect(contentOf(snapshot)).toEqual(contentOf(base));
    }
  });

  it('names markers by position, with TTL and any other setting', () => {
    const changed = body();
    changed.system[2].cache_control.scope = 'global';
    changed.tools[2].cache_control = { type: 'ephemeral', ttl: '1h' };
    changed.tools[9].cache_control = { type: 'ephemeral', ttl: '1h' };
    // A deferred tool is not in the prefix, so neither is its marker.
    changed.tools[8].cache_control = { type: 'ephemeral' };
    changed.cache_control = { type: 'ephemeral' };
    expect(snapshotOf(changed).cacheControl).toEqual({
      enabled: true,
      ttl: '5m',
      scope: 'tools+system+messages',
      // The top-level cache_control marks the last cacheable block: the last message.
      markers: ['tools:2@1h', 'tools@1h', 'system:1@1h', 'system:2@1h,scope=global', 'messages:4@5m', 'messages:4@5m'],
    });
  });

  it('scope reaches as far as the last marker; no marker means caching is off', () => {
    const systemOnly = body();
    delete systemOnly.messages[4].content[0].cache_control;
    expect(snapshotOf(systemOnly).cacheControl).toMatchObject({ scope: 'tools+system', ttl: '1h' });

    const toolsOnly = body();
    for (const block of toolsOnly.system) delete block.cache_control;
    delete toolsOnly.messages[4].content[0].cache_control;
    toolsOnly.tools[9].cache_control = { type: 'ephemeral' };
    expect(snapshotOf(toolsOnly).cacheControl).toEqual({ enabled: true, ttl: '5m', scope: 'tools', markers: ['tools@5m'] });

    delete toolsOnly.tools[9].cache_control;
    expect(snapshotOf(toolsOnly).cacheControl).toEqual({ enabled: false });
  });

  it('a TTL flip 5m → 1h on the last marker changes cacheControl.ttl', () => {
    const changed = body();
    changed.messages[4].content[0].cache_control.ttl = '1h';
    expect(snapshotOf(changed).cacheControl?.ttl).toBe('1h');
    expect(base.cacheControl?.ttl).toBe('5m');
  });

  it('a marker without a ttl lasts 5m', () => {
    const changed = body();
    changed.messages[4].content[0].cache_control = { type: 'ephemeral' };
    expect(snapshotOf(changed).cacheControl).toEqual(base.cacheControl);
  });

  it('changing a tool description changes exactly that tool’s schemaHash', () => {
    const changed = body();
    changed.tools[7].description += ' Results are paginated.';
    const snapshot = snapshotOf(changed);
    const differs = snapshot.tools?.map((tool, i) => tool.schemaHash !== base.tools?.[i]?.schemaHash);
    expect(differs).toEqual([false, false, false, false, false, false, false, true, false]);
    expect(snapshot.tools?.[7]?.name).toBe('mcp__github__search_issues');
    // The size estimate grows with the description; nothing else changes.
    expect(snapshot.prefixChars![0]).toBe(base.prefixChars![0]! + ' Results are paginated.'.length);
    expect({ ...snapshot, tools: undefined, prefixChars: undefined }).toEqual({ ...base, tools: undefined, prefixChars: undefined });
  });

  it('reordering tools changes their order only', () => {
    const changed = body();
    [changed.tools[6], changed.tools[7]] = [changed.tools[7], changed.tools[6]];
    const snapshot = snapshotOf(changed);
    expect(snapshot.tools?.map((t) => t.name).slice(6, 8)).toEqual(['mcp__github__search_issues', 'mcp__filesystem__read_tree']);
    expect([...(snapshot.tools ?? [])].sort((a, b) => a.name.localeCompare(b.name))).toEqual(
      [...(base.tools ?? [])].sort((a, b) => a.name.localeCompare(b.name)),
    );
    expect({ ...snapshot, tools: undefined }).toEqual({ ...base, tools: undefined });
  });

  it('leaves deferred tools out of the prefix; one that becomes visible shows up as added', () => {
    expect(base.tools?.map((t) => t.name)).not.toContain('mcp__github__create_pull_request');
    const loaded = body();
    delete loaded.tools[8].defer_loading;
    const names = snapshotOf(loaded).tools?.map((t) => t.name);
    expect(names).toHaveLength(10);
    expect(names?.[8]).toBe('mcp__github__create_pull_request');
  });

  it('moves the message marker to the newest message and keeps the earlier message hashes when a turn is appended', () => {
    const next = body();
    delete next.messages[4].content[0].cache_control;
    next.messages.push(
      { role: 'assistant', content: [{ type: 'text', text: 'The CI config sets TZ=Europe/Berlin.' }] },
      { role: 'user', content: [{ type: 'text', text: 'Pin it to UTC.', cache_control: { type: 'ephemeral', ttl: '5m' } }] },
    );
    const snapshot = snapshotOf(next);
    expect(snapshot.cacheControl).toEqual({ ...base.cacheControl, markers: ['system:1@1h', 'system:2@1h', 'messages:6@5m'] });
    expect(snapshot.messageHashes?.slice(0, 5)).toEqual(base.messageHashes);
    expect(snapshot.messageHashes).toHaveLength(7);
  });

  it('hashes a string system or message like its one-text-block form, so adding a marker changes nothing else', () => {
    const plain = { model: 'claude-haiku-4-5', max_tokens: 1024, system: 'Be brief.', messages: [{ role: 'user', content: 'Hi' }] };
    const blocks = {
      ...plain,
      system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi', cache_control: { type: 'ephemeral' } }] }],
    };
    const a = snapshotOf(plain, 'anthropic');
    const b = snapshotOf(blocks, 'anthropic');
    expect(contentOf(a)).toEqual(contentOf(b));
    expect(a.cacheControl).toEqual({ enabled: false });
    expect(b.cacheControl?.markers).toEqual(['system:0@5m', 'messages:0@5m']);
  });

  it('carries empty system and tools when the body has none, so a comparison can still be made', () => {
    const snapshot = snapshotOf({ model: 'claude-opus-4-5', max_tokens: 64, messages: [] }, 'anthropic');
    expect(snapshot).toEqual({
      model: 'claude-opus-4-5',
      systemHash: hashContent([]),
      systemBlockHashes: [],
      tools: [],
      cacheControl: { enabled: false },
      messageHashes: [],
      messageBlockCounts: [],
      // The JSON of an empty tool list.
      prefixChars: [2],
      // Known to be absent: turning thinking or tool_choice on later is a change.
      params: {},
    });
  });

  it('takes the model from options when the URL names it (Bedrock invoke, Vertex)', () => {
    const vertex = body();
    delete vertex.model;
    vertex.anthropic_version = 'vertex-2023-10-16';
    expect(snapshotOf(vertex, undefined, { model: 'claude-sonnet-4-5@20250929' }).model).toBe('claude-sonnet-4-5@20250929');
    expect(buildSnapshot(vertex, 'anthropic')).toEqual({
      ok: false,
      field: 'model',
      error: 'model: missing; when the URL names the model, pass it as options.model',
    });
  });

  it('rejects malformed parts with the field path', () => {
    const cases: Array<[(b: Body) => void, string, string]> = [
      [(b) => (b.tools[3].name = 42), 'tools[3].name', 'tools[3].name: expected a string'],
      [(b) => (b.tools[2] = 'Glob'), 'tools[2]', 'tools[2]: expected an object'],
      [(b) => (b.tools = {}), 'tools', 'tools: expected an array'],
      [(b) => (b.system = 12), 'system', 'system: expected a string or an array of blocks'],
      [(b) => (b.system[1].cache_control = 'ephemeral'), 'system[1].cache_control', 'system[1].cache_control: expected an object'],
      [(b) => (b.system[1].cache_control.ttl = 3600), 'system[1].cache_control.ttl', 'system[1].cache_control.ttl: expected a string'],
      [(b) => (b.messages = undefined), 'messages', 'messages: expected an array'],
      [(b) => (b.messages[2] = null), 'messages[2]', 'messages[2]: expected an object'],
      [(b) => (b.messages[1].content = 7), 'messages[1].content', 'messages[1].content: expected a string or an array'],
      [(b) => (b.cache_control = true), 'cache_control', 'cache_control: expected an object'],
      [(b) => (b.model = ''), 'model', 'model: expected a non-empty string'],
    ];
    for (const [edit, field, error] of cases) {
      const broken = body();
      edit(broken);
      expect(buildSnapshot(broken, 'anthropic')).toEqual({ ok: false, field, error });
    }
  });
});
