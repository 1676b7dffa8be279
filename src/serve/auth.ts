// Every route but the health checks needs a key with the right scope (when
// the server is locked); the key decides the project a request reads and
// writes. An open server checks the Host and proxy headers instead.
import type { Hono } from 'hono';
import type { AppDeps, AppEnv } from '../app.js';
import { PROXY_HEADERS, type RequestFacts } from '../auth/open-access.js';
import type { Scope } from '../store/store.js';

/** Liveness and readiness probes carry no data. */
const OPEN_PATHS = new Set(['/healthz', '/readyz']);
const INGEST_PATHS = new Set(['/v1/events', '/v1/logs', '/v1/traces', '/v1/metrics', '/v1/breaks/external']);

export function scopeOf(method: string, path: string): Scope {
  return method === 'POST' && INGEST_PATHS.has(path) ? 'ingest' : 'read';
}

/** "Bearer <key>", or Basic with the key as the password (what a browser or Grafana's basic auth sends). */
export function bearerOf(authorization: string | undefined): string | undefined {
  const basic = /^basic\s+(\S+)\s*$/i.exec(authorization ?? '');
  if (!basic) return authorization;
  const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
  return `Bearer ${decoded.slice(decoded.indexOf(':') + 1)}`;
}

/** What a server without keys checks: where the request is addressed, and whether a proxy passed it on. */
function factsOf(header: (name: string) => string | undefined): RequestFacts {
  return { host: header('host'), proxyHeader: PROXY_HEADERS.find((name) => header(name) !== undefined) };
}

export function registerAuth(app: Hono<AppEnv>, deps: AppDeps): void {
  app.use(async function authenticate(c, next) {
    if (OPEN_PATHS.has(c.req.path)) return next();
    const principal = await deps.auth.authorize(
      bearerOf(c.req.header('authorization')),
      scopeOf(c.req.method, c.req.path),
      factsOf((name) => c.req.header(name)),
    );
    c.set('project', principal.project);
    c.set('keyId', principal.keyId);
    await next();
  });
}
