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

  it('derives the system hash from block hashes, and the cache_control hash from the settings', () => {
    const prefix = toPrefix({
      model: 'm',
      systemBlockHashes: ['a', 'b'],
      cacheControl: { enabled: true, ttl: '1h' },
    });
    expect(prefix.systemHash).toBe(hashString('a\u0000b'));
    expect(prefix.cacheControlHash).toBe(hashValue({ enabled: true, ttl: '1h' }));
    expect(prefix.ttlMs).toBe(3_600_000);
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
