import { describe, expect, it } from 'vitest';
import { buildSnapshot } from '../../src/core/snapshot/index.js';
import { contentOf, loadRequest, snapshotOf, type Body } from './request-fixtures.js';

const body = (): Body => loadRequest('bedrock-converse');
const base = snapshotOf(body());

describe('Bedrock Converse snapshot', () => {
  it('reads cachePoint blocks as markers on the block before them', () => {
    expect(base).toMatchObject({
      model: 'us.anthropic.claude-sonnet-4-5-20250929-v1:0',
      tools: [{ name: 'lookup_invoice' }, { name: 'refund_payment' }],
      cacheControl: {
        enabled: true,
        ttl: '5m',
        scope: 'tools+system+messages',
        markers: ['tools@1h', 'system:0@1h', 'messages:2@5m'],
      },
    });
    expect(base.systemBlockHashes).toHaveLength(1);
    expect(base.messageHashes).toHaveLength(3);
  });

  it('removing every cachePoint changes cacheControl and no content hash', () => {
    const changed = body();
    changed.system.pop();
    changed.toolConfig.tools.pop();
    changed.messages[2].content.pop();
    const snapshot = snapshotOf(changed, 'bedrock');
    expect(snapshot.cacheControl).toEqual({ enabled: false });
    expect(contentOf(snapshot)).toEqual(contentOf(base));
  });

  it('a cachePoint between tools names the tool it ends', () => {
    const changed = body();
    changed.toolConfig.tools.splice(1, 0, { cachePoint: { type: 'default' } });
    expect(snapshotOf(changed).cacheControl?.markers?.[0]).toBe('tools:0@5m');
  });

  it('takes modelId from options (it is in the URL) and says so when there is none', () => {
    const { modelId: _, ...bare } = body();
    expect(snapshotOf(bare, 'bedrock', { model: 'amazon.nova-pro-v1:0' }).model).toBe('amazon.nova-pro-v1:0');
    expect(buildSnapshot(bare, 'bedrock')).toMatchObject({ ok: false, field: 'modelId' });
  });

  it('reads a body without tools or system', () => {
    const snapshot = snapshotOf({ modelId: 'amazon.nova-lite-v1:0', messages: [{ role: 'user', content: [{ text: 'Hi' }] }] });
    expect(snapshot.tools).toEqual([]);
    expect(snapshot.systemBlockHashes).toEqual([]);
  });

  it('rejects malformed parts with the field path', () => {
    const cases: Array<[(b: Body) => void, string]> = [
      [(b) => (b.toolConfig = []), 'toolConfig: expected an object'],
      [(b) => (b.toolConfig.tools[1].toolSpec.name = null), 'toolConfig.tools[1].toolSpec.name: expected a string'],
      [(b) => (b.system[1].cachePoint.ttl = 60), 'system[1].cachePoint.ttl: expected a string'],
      [(b) => (b.messages[2].content[1].cachePoint = 'default'), 'messages[2].content[1].cachePoint: expected an object'],
      [(b) => (b.system = 'Be kind.'), 'system: expected an array'],
    ];
    for (const [edit, error] of cases) {
      const broken = body();
      edit(broken);
      const result = buildSnapshot(broken, 'bedrock');
      expect(result.ok ? undefined : result.error).toBe(error);
    }
  });
});
