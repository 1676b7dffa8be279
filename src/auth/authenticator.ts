// Who is calling, for every transport (HTTP, gRPC): a bearer key resolves to
// its project and scopes; with no active key at all, everything belongs to the
// default project, but only where running open is allowed (loopback, or
// --insecure-no-auth): elsewhere, revoking the last key locks the server.
import { timingSafeEqual } from 'node:crypto';
import { CachebreakError } from '../errors.js';
import type { Scope, Store } from '../store/store.js';
import { hashKey, keyPrefix } from './keys.js';

export interface Principal {
  project: string;
  /** null when no keys are configured. */
  keyId: number | null;
}

export interface RateLimit {
  /** Requests per second a key may make on average. */
  perSecond: number;
  /** Requests a key may make at once after being idle. */
  burst: number;
}

export interface AuthOptions {
  /** The project of unauthenticated requests when no key exists. */
  openProject: string;
  /** Whether the server may run open when no active key exists; otherwise every request needs a key. */
  openWithoutKeys: boolean;
  rateLimit: RateLimit;
  now: () => number;
}

/** Whether any key exists is asked at most this often: a new key locks the server within a second. */
const OPEN_CHECK_MS = 1_000;

interface Bucket {
  tokens: number;
  at: number;
}

function unauthorized(message: string): CachebreakError {
  return new CachebreakError('unauthorized', message, 'send Authorization: Bearer <key>; create keys with `cachebreak keys create`');
}

export class Authenticator {
  private open: { value: boolean; checkedAt: number } | undefined;
  private readonly buckets = new Map<number, Bucket>();

  constructor(
    private readonly store: Store,
    private readonly options: AuthOptions,
  ) {}

  /** Throws a 401, 403 or 429 CachebreakError when the call may not proceed. */
  async authorize(authorization: string | undefined, scope: Scope): Promise<Principal> {
    if (this.options.openWithoutKeys && (await this.isOpen())) return { project: this.options.openProject, keyId: null };
    const match = /^bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
    if (!match) throw unauthorized(authorization ? 'the Authorization header is not "Bearer <key>"' : 'an API key is required');
    const token = match[1]!;
    const hash = Buffer.from(hashKey(token), 'hex');
    // Found by its public prefix; the secret part is compared only as a hash, in constant time.
    const key = (await this.store.keysByPrefix(keyPrefix(token))).find((k) => timingSafeEqual(Buffer.from(k.hash, 'hex'), hash));
    if (!key || key.revokedMs !== null) throw unauthorized('unknown or revoked API key');
    if (!key.scopes.includes(scope) && !key.scopes.includes('admin')) {
      throw new CachebreakError(
        'forbidden',
        `this key has scope ${key.scopes.join(', ')}; this request needs ${scope}`,
        `create a key with --scope ${scope} for this`,
      );
    }
    this.take(key.id);
    return { project: key.project, keyId: key.id };
  }

  private async isOpen(): Promise<boolean> {
    const now = this.options.now();
    if (!this.open || now - this.open.checkedAt >= OPEN_CHECK_MS) {
      this.open = { value: !(await this.store.hasActiveKeys()), checkedAt: now };
    }
    return this.open.value;
  }

  /** Token bucket per key: `burst` at once, refilled at `perSecond`. */
  private take(keyId: number): void {
    const { perSecond, burst } = this.options.rateLimit;
    const now = this.options.now();
    const bucket = this.buckets.get(keyId) ?? { tokens: burst, at: now };
    bucket.tokens = Math.min(burst, bucket.tokens + ((now - bucket.at) / 1000) * perSecond);
    bucket.at = now;
    this.buckets.set(keyId, bucket);
    if (bucket.tokens < 1) {
      throw new CachebreakError(
        'rate_limited',
        `this key made more than ${perSecond} requests per second`,
        'retry after the delay in Retry-After, or batch more events per request',
        { retryAfter: Math.max(1, Math.ceil((1 - bucket.tokens) / perSecond)) },
      );
    }
    bucket.tokens -= 1;
  }
}
