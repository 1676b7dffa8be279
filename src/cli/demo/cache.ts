// A provider's prompt cache, simulated: what a request reads and writes
// follows from what earlier requests left and when. The demo's usage numbers
// come from here, so every break in it has a cause the detector can find.
import { hashString } from '../../core/hash.js';

/** One cacheable unit of a prompt: a tool definition, a system block, a message. */
export interface Block {
  hash: string;
  tokens: number;
}

export interface CachePolicy {
  /**
   * Anthropic-style: only prefixes that end at a cache_control marker are
   * written, and writes are billed. Otherwise (OpenAI, Gemini, DeepSeek) every
   * prefix is cached automatically and no write is reported.
   */
  explicit: boolean;
  /** Reads are reported in multiples of this (OpenAI 128 tokens). */
  granularity: number;
  /** Shorter prefixes are not cached. */
  minimum: number;
}

export interface CacheRequest {
  /** Model and cache settings: a different model or TTL never reads these entries. */
  namespace: string;
  blocks: readonly Block[];
  /** Indices of the blocks a cache_control marker ends at (explicit policy). */
  markers: readonly number[];
  /** Request start and response end, epoch ms. */
  start: number;
  end: number;
  ttlMs: number;
}

export interface CacheOutcome {
  read: number;
  write: number;
  total: number;
}

/** Blocks a lookup walks back from a marker (Anthropic's documented lookback). */
const LOOKBACK = 20;

/** One per session: sessions never share entries, so they can be simulated one after another. */
export class ProviderCache {
  /**
   * namespace → hash of a prefix → when that entry became readable (the end
   * of the response that first wrote it: a request that starts earlier, side
   * by side with the writer, finds nothing) and when it expires.
   */
  private readonly spaces = new Map<string, Map<string, { from: number; expires: number }>>();

  request(request: CacheRequest, policy: CachePolicy): CacheOutcome {
    let space = this.spaces.get(request.namespace);
    if (!space) this.spaces.set(request.namespace, (space = new Map()));
    const prefixHashes: string[] = [];
    const prefixTokens: number[] = [];
    let hash = request.namespace;
    let tokens = 0;
    for (const block of request.blocks) {
      hash = hashString(hash + block.hash);
      tokens += block.tokens;
      prefixHashes.push(hash);
      prefixTokens.push(tokens);
    }
    // An explicit cache looks up each marker's prefix and up to LOOKBACK blocks before it; an automatic one, any prefix.
    const reachable = (i: number) => !policy.explicit || request.markers.some((m) => i <= m && i >= m - LOOKBACK);
    let hit = -1;
    for (let i = request.blocks.length - 1; i >= 0; i--) {
      const entry = space.get(prefixHashes[i]!);
      if (entry !== undefined && entry.from <= request.start && entry.expires >= request.start && reachable(i)) {
        hit = i;
        break;
      }
    }
    // Every checkpoint of this request is read or written now, so each lives
    // for another TTL from this response on.
    const checkpoints = policy.explicit ? request.markers : request.blocks.map((_, i) => i);
    let lastWritten = -1;
    for (const i of checkpoints) {
      if (prefixTokens[i]! < policy.minimum) continue;
      const entry = space.get(prefixHashes[i]!);
      const live = entry !== undefined && entry.expires >= request.start;
      space.set(prefixHashes[i]!, { from: live ? Math.min(entry.from, request.end) : request.end, expires: request.end + request.ttlMs });
      lastWritten = Math.max(lastWritten, i);
    }
    const cached = hit >= 0 ? prefixTokens[hit]! : 0;
    const read = Math.floor(cached / policy.granularity) * policy.granularity;
    const write = policy.explicit && lastWritten > hit ? prefixTokens[lastWritten]! - cached : 0;
    return { read, write, total: tokens };
  }

  /** The provider dropped this session's entries early (load, a deploy). */
  evict(): void {
    this.spaces.clear();
  }
}
