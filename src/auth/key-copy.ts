// The API keys in memory, for a path that must not wait on the database: the
// provider proxy decides each model call from this copy, refreshed from the
// store in the background every second. When a refresh fails or hangs (the
// database is down, locked or restarting), the last copy read keeps deciding,
// so a key created or revoked elsewhere is seen within a second of the
// database answering again. The decision itself is the Authenticator's, the
// same as on the main port.
import type { Scope, Store } from '../store/store.js';
import type { Logger } from '../telemetry/logfmt.js';
import { LogThrottle } from '../telemetry/throttle.js';
import { bearerToken, type Access, type Authenticator, type Principal, type StoredKey } from './authenticator.js';
import { keyPrefix } from './keys.js';
import type { RequestFacts } from './open-access.js';

/** How often the copy is read again: a key created or revoked counts within this long. */
export const KEY_REFRESH_MS = 1_000;

interface Copy {
  access: Access;
  byPrefix: Map<string, StoredKey[]>;
}

export class KeyCopy {
  private copy: Copy | undefined;
  private refreshing: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly repeated = new LogThrottle();

  constructor(
    private readonly store: Store,
    private readonly auth: Authenticator,
    private readonly log: Logger,
  ) {}

  /** Reads the keys (a store that cannot be read fails the start). */
  async load(): Promise<void> {
    this.copy = this.copyOf(await this.store.keysWithHashes());
  }

  /** From now on, reads them again every second in the background, until stop(). */
  refreshEverySecond(): void {
    this.timer ??= setInterval(() => this.refresh(), KEY_REFRESH_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** As Authenticator.authorize, from the copy: never waits. */
  authorize(authorization: string | undefined, scope: Scope, request: RequestFacts): Principal {
    const copy = this.copy!;
    const token = bearerToken(authorization);
    const candidates = token === undefined ? [] : (copy.byPrefix.get(keyPrefix(token)) ?? []);
    return this.auth.decide(copy.access, authorization, scope, request, candidates);
  }

  /** One read at a time: a read that hangs (a locked table) is waited for, not piled up. */
  private refresh(): void {
    if (this.refreshing) return;
    this.refreshing = this.store
      .keysWithHashes()
      .then(
        (keys) => {
          this.copy = this.copyOf(keys);
        },
        (error: unknown) => {
          const suppressed = this.repeated.admit('keys');
          if (suppressed === undefined) return;
          this.log.warn('keys_not_refreshed', {
            message: `cannot read the API keys (${(error as Error).message}); the proxy decides from the keys it read last`,
            ...(suppressed > 0 ? { suppressed } : {}),
          });
        },
      )
      .finally(() => (this.refreshing = undefined));
  }

  private copyOf(keys: readonly StoredKey[]): Copy {
    const byPrefix = new Map<string, StoredKey[]>();
    for (const key of keys) byPrefix.set(key.prefix, [...(byPrefix.get(key.prefix) ?? []), key]);
    const state = keys.some((key) => key.revokedMs === null) ? 'active' : keys.length > 0 ? 'revoked' : 'none';
    return { access: this.auth.accessOf(state), byPrefix };
  }
}
