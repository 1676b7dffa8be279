// Builds the HTTP application from its parts. Tests call it in-process with
// app.request(); the server binds it to a port.
import { Hono } from 'hono';
import { CachebreakError } from './errors.js';
import { registerEvents } from './ingest/http/route.js';
import type { Pipeline } from './ingest/pipeline.js';
import { registerHealth } from './serve/health.js';
import { registerMetrics } from './serve/metrics.js';
import { registerBreaks } from './serve/rest/breaks.js';
import { ROUTE_DOCS } from './serve/rest/docs.js';
import { registerSessions } from './serve/rest/sessions.js';
import { registerStats } from './serve/rest/stats.js';
import { InvalidQueryError, type Store } from './store/store.js';
import type { Counters } from './telemetry/counters.js';
import type { Logger } from './telemetry/logfmt.js';

export interface AppDeps {
  store: Store;
  pipeline: Pipeline;
  counters: Counters;
  log: Logger;
  /** Largest request body, before and after decompression. */
  bodyLimit: number;
  /** The project that requests read and write. */
  project: string;
  now: () => number;
}

export type AppEnv = { Variables: { project: string; requestId: string } };

let sequence = 0;

function renderError(error: CachebreakError, requestId: string): Response {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (error.retryAfter !== undefined) headers['retry-after'] = String(error.retryAfter);
  // The rest of an oversized body was never read: the connection cannot carry another request.
  if (error.code === 'payload_too_large') headers.connection = 'close';
  const body = { error: { code: error.code, message: error.message, hint: error.hint, requestId } };
  return new Response(JSON.stringify(body), { status: error.status, headers });
}

export function buildApp(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use(async function requestContext(c, next) {
    c.set('requestId', c.req.header('x-request-id')?.slice(0, 128) ?? `${Date.now().toString(36)}-${(++sequence).toString(36)}`);
    c.set('project', deps.project);
    await next();
  });

  registerEvents(app, deps);
  registerBreaks(app, deps);
  registerSessions(app, deps);
  registerStats(app, deps);
  registerMetrics(app, deps);
  registerHealth(app, deps);
  app.get('/v1', (c) => c.json({ routes: ROUTE_DOCS }));

  app.notFound((c) => {
    const error = new CachebreakError('not_found', `no route ${c.req.method} ${c.req.path}`, 'GET /v1 lists the routes');
    return renderError(error, c.var.requestId);
  });
  app.onError((error, c) => {
    const requestId = c.var.requestId ?? 'unknown';
    if (error instanceof CachebreakError) return renderError(error, requestId);
    if (error instanceof InvalidQueryError) {
      return renderError(new CachebreakError('bad_request', `${error.field}: ${error.message}`, 'see GET /v1'), requestId);
    }
    deps.log.error('unhandled_error', { requestId, path: c.req.path, message: error.message, stack: error.stack });
    return renderError(new CachebreakError('internal', 'internal error', `report it with the request id ${requestId}`), requestId);
  });
  return app;
}
