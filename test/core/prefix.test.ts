import { describe, expect, it } from 'vitest';
import { hashString, hashValue } from '../../src/core/hash.js';
import { parseDuration } from '../../src/core/duration.js';
import { toPrefix } from '../../src/core/prefix.js';

describe('prefix', () => {
  it('parses the TTL and duration spellings providers and users write', () => {
    expect(parseDuration('5m')).toBe(300_000);
    expect(parseDuration('1h')).toBe(3_600_000);
    expect(parseDuration('3600s')).toBe(3_600_000);
    expect(parseDuration('24h')).toBe(86_400_000);
    expect(parseDuration('1.5h')).toBe(5_400_000);
    expect(parseDuration('1d')).toBe(86_400_000);
    expect(parseDuration('in_memory')).toBeUndefined();
    expect(parseDuration(undefined)).toBeUndefined();
  });

  it('derives the system hash from block hashes, and the cache_control hash from what no marker says', () => {
    const prefix = toPrefix({
      model: 'm',
      systemBlockHashes: ['a', 'b'],
      cacheControl: { enabled: true, ttl: '1h', scope: 'tools+system', key: 'k' },
    });
    expect(prefix.systemHash).toBe(hashString('a\u0000b'));
    // TTL and scope belong to the markers (or to ttlMs without them).
    expect(prefix.cacheControlHash).toBe(hashValue({ enabled: true, key: 'k' }));
    expect(prefix.ttlMs).toBe(3_600_000);
  });

  it('keeps marker locations and TTLs, and anything else a client sent as a hash', () => {
    const prefix = toPrefix({
      model: 'm',
      messageHashes: ['x', 'y'],
      cacheControl: { markers: ['messages:-1', 'system:0@1h,scope=acme corp', 'somewhere@5m', 'tools@forever'] },
    });
    expect(prefix.markers).toEqual([
      `other:${hashString('somewhere')}@5m`,
      `tools@${hashString('forever')}`,
      `system:0@1h,${hashString(',scope=acme corp')}`,
      'messages:1@5m',
    ]);
  });

  it('keeps client hashes as opaque strings', () => {
    const prefix = toPrefix({ model: 'm', systemHash: 'sys-v1', cacheControlHash: 'cc-v1', messageHashes: ['x'] });
    expect(prefix).toMatchObject({ systemHash: 'sys-v1', cacheControlHash: 'cc-v1', messageHashes: ['x'] });
    expect(prefix.toolsHash).toBeUndefined();
  });

  it('gives equal tool lists equal aggregate hashes and any edit a different one', () => {
    const list = [{ name: 'a', schemaHash: '1' }, { name: 'b', schemaHash: '2' }];
    const same = toPrefix({ model: 'm', tools: list.map((t) => ({ ...t })) }).toolsHash;
    expect(toPrefix({ model: 'm', tools: list }).toolsHash).toBe(same);
    expect(toPrefix({ model: 'm', tools: [...list].reverse() }).toolsHash).not.toBe(same);
    expect(toPrefix({ model: 'm', tools: [list[0]!, { name: 'b', schemaHash: '3' }] }).toolsHash).not.toBe(same);
  });
});
