// Who is calling, for every transport (HTTP, gRPC): a bearer key resolves to
// its project and scopes. A server is open (everything belongs to the default
// project, no key needed) only while its database has never had a key and it
// may run open (loopback, or --insecure-no-auth). Once a key was created,
// revoking the last one keeps it locked, unless it was started with
// --insecure-no-auth. An open server still checks each HTTP request's Host
// and proxy headers (open-access.ts).
import { timingSafeEqual } from 'node:crypto';
import { CachebreakError } from '../errors.js';
import type { ApiKey, KeyState, Scope, Store } from '../store/store.js';
import type { Logger } from '../telemetry/logfmt.js';
import { hashKey, keyPrefix } from './keys.js';
import { OpenAccess, type RequestFacts } from './open-access.js';

/** `open`: no key is needed; `locked`: every request but the health checks needs one. */
export type Access = 'open' | 'locked';

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
  /** Whether the server may run open while its database has never had a key (loopback, or --insecure-no-auth). */
  openWithoutKeys: boolean;
  /**
   * --insecure-no-auth: open also once every key is revoked, and to requests
   * that came through a proxy (which then has to authenticate them).
   */
  insecureNoAuth?: boolean;
  /** Host names an open server answers besides localhost and IP addresses (--public-url). */
  publicHosts?: readonly string[];
  rateLimit: RateLimit;
  now: () => number;
  /** Where the first proxied request to an open server is reported. */
  log?: Logger;
}

/** Whether any key exists is asked at most this often: a new key locks the server within a second. */
const OPEN_CHECK_MS = 1_000;

interface Bucket {
  tokens: number;
  at: number;
}

/** A stored key with its hash, as compared. */
export type StoredKey = ApiKey & { hash: string };

/** The key of an Authorization header "Bearer <key>"; undefined for any other. */
export function bearerToken(authorization: string | undefined): string | undefined {
  return /^bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
}

function unauthorized(message: string): CachebreakError {
  return new CachebreakError('unauthorized', message, 'send Authorization: Bearer <key>; create keys with `cachebreak keys create`');
}

export class Authenticator {
  private state: { access: Access; keys: KeyState; checkedAt: number } | undefined;
  private readonly buckets = new Map<number, Bucket>();
  private readonly openAccess: OpenAccess;
  private proxyReported = false;

  constructor(
    private readonly store: Store,
    private readonly options: AuthOptions,
  ) {
    this.openAccess = new OpenAccess(options.publicHosts ?? [], options.insecureNoAuth === true);
  }

  /**
   * Throws a 401, 403 or 429 CachebreakError when the call may not proceed.
   * `request`: what an open server checks of an HTTP request (Host, proxy headers).
   */
  async authorize(authorization: string | undefined, scope: Scope, request?: RequestFacts): Promise<Principal> {
    const access = await this.access();
    const token = access === 'locked' ? bearerToken(authorization) : undefined;
    const candidates = token === undefined ? [] : await this.store.keysByPrefix(keyPrefix(token));
    return this.decide(access, authorization, scope, request, candidates);
  }

  /**
   * The decision on one request, whichever way the keys were read (from the
   * store, or from a copy in memory): `candidates` are the stored keys with
   * the prefix of the key the request sends.
   */
  decide(access: Access, authorization: string | undefined, scope: Scope, request: RequestFacts | undefined, candidates: readonly StoredKey[]): Principal {
    if (access === 'open') {
      if (request) {
        if (request.proxyHeader !== undefined) this.reportProxy(request.proxyHeader);
        this.openAccess.check(request);
      }
      return { project: this.options.openProject, keyId: null };
    }
    const token = bearerToken(authorization);
    if (token === undefined) throw unauthorized(authorization ? 'the Authorization header is not "Bearer <key>"' : 'an API key is required');
    const hash = Buffer.from(hashKey(token), 'hex');
    // Found by its public prefix; the secret part is compared only as a hash, in constant time.
    const key = candidates.find((k) => timingSafeEqual(Buffer.from(k.hash, 'hex'), hash));
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

  /** Open or locked now: asked of the store at most once a second. */
  async access(): Promise<Access> {
    const now = this.options.now();
    if (!this.state || now - this.state.checkedAt >= OPEN_CHECK_MS) {
      const keys = await this.store.keyState();
      this.state = { access: this.accessOf(keys), keys, checkedAt: now };
    }
    return this.state.access;
  }

  /** Open or locked, for a database whose keys are in this state. */
  accessOf(keys: KeyState): Access {
    if (keys === 'active') return 'locked';
    if (keys === 'none') return this.options.openWithoutKeys ? 'open' : 'locked';
    // Every key revoked: revoking is a decision to lock, not to open.
    return this.options.insecureNoAuth === true ? 'open' : 'locked';
  }

  /** The first request through a proxy to an open server is said loudly, once. */
  private reportProxy(header: string): void {
    if (this.proxyReported) return;
    this.proxyReported = true;
    const message = this.options.insecureNoAuth
      ? 'a request came through a proxy to this server, which has no API key (--insecure-no-auth): the proxy must authenticate every request, or anyone who reaches it reads and writes'
      : 'a request came through a proxy to this server, which has no API key: refused (403), as is every proxied request until a key exists; create one with cachebreak keys create --project NAME --scope ingest,read';
    this.options.log?.warn('open_behind_proxy', { header, message });
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
