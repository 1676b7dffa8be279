// What an open server (no active API key) still checks on each HTTP request:
// that it is addressed to this machine by a name DNS cannot rebind, and that it
// did not come through a reverse proxy.
//
// DNS rebinding: a web page at attacker.example.com has its name re-pointed at
// 127.0.0.1, and the victim's browser then reads the local server as
// attacker.example.com, same-origin. Such a request carries that name in its
// Host header. localhost and IP addresses cannot be rebound, so they are
// answered; other names only when configured (--public-url).
//
// A proxy: a server bound to loopback behind Caddy or nginx serves whoever
// reaches the proxy. Proxies announce themselves with X-Forwarded-For,
// Forwarded or X-Real-IP; an open server refuses such requests unless it was
// started with --insecure-no-auth (the proxy authenticates).
import { isIP } from 'node:net';
import { CachebreakError } from '../errors.js';

/** Headers a reverse proxy adds; the first one present is named in messages. */
export const PROXY_HEADERS = ['x-forwarded-for', 'forwarded', 'x-real-ip'] as const;

/** What the open-mode checks need to know of an HTTP request. */
export interface RequestFacts {
  /** The Host header; undefined when absent (HTTP/1.0, in-process requests). */
  host: string | undefined;
  /** The first proxy header the request carries, if any. */
  proxyHeader: string | undefined;
}

/** "Example.COM:4318" → "example.com", "[::1]:80" → "::1"; undefined for what is not a host. */
export function hostName(host: string): string | undefined {
  const value = host.trim().toLowerCase();
  const bracketed = /^\[([0-9a-f:.]+)\](?::\d*)?$/.exec(value);
  if (bracketed) return bracketed[1];
  const named = /^([^:@/\s]+)(?::\d*)?$/.exec(value);
  return named?.[1];
}

/** The host names of --public-url values: URLs or bare names, with or without a port. */
export function publicHostOf(value: string): string | undefined {
  const text = value.trim();
  if (text === '') return undefined;
  if (text.includes('://')) {
    try {
      return hostName(new URL(text).hostname);
    } catch {
      return undefined;
    }
  }
  return hostName(text);
}

export class OpenAccess {
  private readonly names: Set<string>;

  constructor(publicHosts: readonly string[], private readonly proxiesAllowed: boolean) {
    this.names = new Set(publicHosts.map((h) => h.toLowerCase()));
  }

  /** Whether an open server answers a request addressed to this Host. */
  allowsHost(host: string | undefined): boolean {
    // No Host at all: no browser sent it, so no rebinding.
    if (host === undefined) return true;
    const name = hostName(host);
    if (name === undefined) return false;
    return name === 'localhost' || isIP(name) !== 0 || this.names.has(name);
  }

  /** Throws a 403 when an open server must not answer this request. */
  check(request: RequestFacts): void {
    if (!this.allowsHost(request.host)) {
      const shown = JSON.stringify((request.host ?? '').slice(0, 100));
      throw new CachebreakError(
        'forbidden',
        `this server has no API key, so it answers only requests addressed to localhost, an IP address or a --public-url name; this one is addressed to ${shown} (Host header)`,
        'reached by that name on purpose? start the server with --public-url naming it; better, create an API key (cachebreak keys create --project NAME --scope ingest,read) and send it',
      );
    }
    if (request.proxyHeader !== undefined && !this.proxiesAllowed) {
      throw new CachebreakError(
        'forbidden',
        `this server has no API key and answers only local clients, but this request came through a proxy (${request.proxyHeader}): anyone who can reach the proxy could read and write`,
        'create an API key (cachebreak keys create --project NAME --scope ingest,read) and send it; or, if the proxy authenticates every request itself, start the server with --insecure-no-auth',
      );
    }
  }
}
