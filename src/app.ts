// Builds the HTTP application from its parts. Tests call it in-process with
// app.request(); the server binds it to a port.
import type { HttpBindings } from '@hono/node-server';
import { Hono, type MiddlewareHandler } from 'hono';
import { CachebreakError, leftBodyUnread } from './errors.js';
import { registerExternalBreakIngest } from './ingest/http/external-breaks.js';
import { registerEvents } from './ingest/http/route.js';
import { otlpErrorResponse, registerOtlp } from './ingest/otlp/http.js';
import type { OtlpReceiver } from './ingest/otlp/receive.js';
import type { Pipeline } from './ingest/pipeline.js';
import type { Authenticator } from './auth/authenticator.js';
import type { BodyBudget } from './ingest/http/body.js';
import { clientOf, type InflightBudget } from './ingest/inflight.js';
import type { Limits } from './ingest/limits.js';
import type { Alerts } from './alerts/alerts.js';
import { registerAlerts } from './serve/alerts.js';
import { registerAlertsPage } from './serve/ui/alerts.js';
import { registerAuth } from './serve/auth.js';
import { FORWARDED_PROJECT, registerForwardedReads } from './serve/readers/forward.js';
import type { ReaderPool } from './serve/readers/pool.js';
import { registerGrafana } from './serve/grafana/index.js';
import { DEFAULT_QUERY_BODY_LIMIT } from './serve/grafana/simpod/body.js';
import { registerHealth } from './serve/health.js';
import { registerMetrics } from './serve/metrics.js';
import { refuseNulInUrl } from './serve/nul-bytes.js';
import { registerBreaks } from './serve/rest/breaks.js';
import { registerExternalBreaks } from './serve/rest/external-breaks.js';
import { registerInsights } from './serve/rest/insights.js';
import { ROUTE_DOCS } from './serve/rest/docs.js';
import { registerSessions } from './serve/rest/sessions.js';
import { registerStats } from './serve/rest/stats.js';
import { errorPage, isUiPage } from './serve/ui/error-page.js';
import { registerUi } from './serve/ui/index.js';
import { InvalidQueryError, type Store } from './store/store.js';
import type { Counters } from './telemetry/counters.js';
import type { PriceLookup } from './core/prices.js';
import type { Logger } from './telemetry/logfmt.js';
import { LogThrottle } from './telemetry/throttle.js';

export interface AppDeps {
  store: Store;
  /** The prices detection uses, for the insights' dollar figures; the price database's when absent. */
  prices?: PriceLookup;
  pipeline: Pipeline;
  counters: Counters;
  log: Logger;
  /** Largest request body, before and after decompression. */
  bodyLimit: number;
  /** Largest body of a read request (Grafana queries); DEFAULT_QUERY_BODY_LIMIT when absent. */
  queryBodyLimit?: number;
  /** Decides each request's project from its API key. */
  auth: Authenticator;
  /** How much one request may carry. */
  limits: Limits;
  now: () => number;
  /** The OTLP receiver shared with gRPC; a new one when absent. */
  otlp?: OtlpReceiver;
  /** Traces cachebreak's own HTTP handling (telemetry/tracing.ts); absent: not traced. */
  selfTracing?: MiddlewareHandler;
  /** Reader threads that answer read routes; absent: the main thread answers them. */
  readers?: ReaderPool;
  /** Bounds the request bodies ingest holds at once; absent: not bounded. */
  inflight?: InflightBudget;
  /** The regression alerts the server evaluates; absent: no rule is on. */
  alerts?: Alerts;
  /** How long an ingest body may go without a byte arriving before it is answered 408 (--body-timeout); absent: no limit here. */
  bodyTimeoutMs?: number;
  /** URL template of a break's trace in the user's tracer (--trace-link); absent: the break page links none. */
  traceLink?: string;
}

/** `keyId` is null when no API key is configured (the open, single-project mode). */
export type AppEnv = { Variables: { project: string; keyId: number | null; requestId: string; body: BodyBudget } };

/** What the read routes need: they run on the main thread or in a reader thread alike. */
export type ReadDeps = Pick<AppDeps, 'store' | 'log' | 'now' | 'prices' | 'traceLink'> & { queryBodyLimit: number };

let sequence = 0;

function renderError(error: CachebreakError, requestId: string, path?: string): Response {
  const page = path !== undefined && isUiPage(path);
  const headers: Record<string, string> = { 'content-type': page ? 'text/html; charset=UTF-8' : 'application/json' };
  if (error.retryAfter !== undefined) headers['retry-after'] = String(error.retryAfter);
  if (leftBodyUnread(error.code)) headers.connection = 'close';
  // Lets a browser (the web UI) ask for the key as a Basic password.
  if (error.code === 'unauthorized') headers['www-authenticate'] = 'Basic realm="cachebreak", charset="UTF-8"';
  if (page) return new Response(errorPage(error.status, error.code, error.message, error.hint, requestId), { status: error.status, headers });
  const body = { error: { code: error.code, message: error.message, hint: error.hint, requestId } };
  return new Response(JSON.stringify(body), { status: error.status, headers });
}

function requestContext(): MiddlewareHandler<AppEnv> {
  return async function requestContext(c, next) {
    c.set('requestId', c.req.header('x-request-id')?.slice(0, 128) ?? `${Date.now().toString(36)}-${(++sequence).toString(36)}`);
    await next();
  };
}

/** Every route that only reads stored data. */
export function registerReads(app: Hono<AppEnv>, deps: ReadDeps): void {
  // /v1/breaks/external before /v1/breaks/:requestId, which would take it.
  registerExternalBreaks(app, deps);
  registerBreaks(app, deps);
  registerInsights(app, deps);
  registerSessions(app, deps);
  registerStats(app, deps);
  registerGrafana(app, deps);
  registerUi(app, deps);
}

/** The client closed the connection before its request was read and answered: nothing failed on this side. */
function clientGone(error: Error, request: Request): boolean {
  return (error as NodeJS.ErrnoException).code === 'ECONNRESET' || request.signal.aborted;
}

/** A read, a key check or a write that failed because the database cannot serve now: 503, to retry later. */
function unavailable(error: Error, store: Store): Error {
  if (error instanceof CachebreakError || store.classifyError(error) !== 'unavailable') return error;
  return new CachebreakError('unavailable', `the database cannot answer right now (${error.message})`, 'retry after the delay in Retry-After; GET /readyz says when the database answers again', {
    retryAfter: 5,
    cause: error,
  });
}

function installErrorHandling(app: Hono<AppEnv>, log: Logger, store: Store): void {
  const repeated = new LogThrottle();
  app.notFound((c) => {
    const error = new CachebreakError('not_found', `no route ${c.req.method} ${c.req.path}`, 'GET /v1 lists the routes');
    return renderError(error, c.var.requestId, c.req.path);
  });
  app.onError((thrown, c) => {
    const error = unavailable(thrown, store);
    if (clientGone(error, c.req.raw)) {
      const suppressed = repeated.admit('client_disconnected');
      if (suppressed !== undefined) log.info('client_disconnected', { requestId: c.var.requestId, path: c.req.path, ...(suppressed > 0 ? { suppressed } : {}) });
      // Nobody is left to read it.
      return new Response(null, { status: 400, headers: { connection: 'close' } });
    }
    const otlp = otlpErrorResponse(c, error, log);
    if (otlp) return otlp;
    const requestId = c.var.requestId ?? 'unknown';
    if (error instanceof CachebreakError) return renderError(error, requestId, c.req.path);
    if (error instanceof InvalidQueryError) {
      return renderError(new CachebreakError('bad_request', `${error.field}: ${error.message}`, error.hint ?? (isUiPage(c.req.path) ? 'start again from the first page' : 'see GET /v1')), requestId, c.req.path);
    }
    log.error('unhandled_error', { requestId, path: c.req.path, message: error.message, stack: error.stack });
    return renderError(new CachebreakError('internal', 'internal error', `report it with the request id ${requestId}`), requestId, c.req.path);
  });
}

/** The POST routes whose bodies ingest reads. */
const INGEST_PATHS = ['/v1/events', '/v1/logs', '/v1/traces', '/v1/metrics', '/v1/breaks/external'];

/** How each ingest request reads its body: under the limits, and holding what it reads of the in-flight budget until it is answered. */
function budgetBodies(app: Hono<AppEnv>, deps: AppDeps): void {
  for (const path of INGEST_PATHS) {
    app.post(path, async function budgetBody(c, next) {
      const address = (c.env as Partial<HttpBindings> | undefined)?.incoming?.socket.remoteAddress;
      const holding = deps.inflight?.open(clientOf(c.var.keyId, address));
      c.set('body', { limit: deps.bodyLimit, option: '--body-limit', holding, idleMs: deps.bodyTimeoutMs });
      try {
        await next();
      } finally {
        holding?.release();
      }
    });
  }
}

export function buildApp(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use(requestContext());
  if (deps.selfTracing) app.use(deps.selfTracing);
  registerAuth(app, deps);
  app.use(refuseNulInUrl());
  budgetBodies(app, deps);

  registerEvents(app, deps);
  registerExternalBreakIngest(app, deps);
  registerOtlp(app, deps);
  const readDeps = { ...deps, queryBodyLimit: deps.queryBodyLimit ?? DEFAULT_QUERY_BODY_LIMIT };
  if (deps.readers) {
    // The same routes registerReads makes, each handed to a reader thread.
    const reads = new Hono<AppEnv>();
    registerReads(reads, readDeps);
    registerForwardedReads(app, reads.routes, deps.readers, readDeps.queryBodyLimit);
  } else {
    registerReads(app, readDeps);
  }
  // Kept in this thread's memory: answered here, never by a reader thread.
  registerAlerts(app, deps.alerts);
  registerAlertsPage(app, deps.alerts);
  registerMetrics(app, deps);
  registerHealth(app, deps);
  app.get('/v1', (c) => c.json({ routes: ROUTE_DOCS }));
  installErrorHandling(app, deps.log, deps.store);
  return app;
}

/**
 * The read routes alone, for a reader thread: the main thread has already
 * checked the key, and names the project in an internal header.
 */
export function buildReadApp(deps: ReadDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use(requestContext());
  app.use(async function projectOfForwarded(c, next) {
    c.set('project', c.req.header(FORWARDED_PROJECT) ?? '');
    c.set('keyId', null);
    await next();
  });
  registerReads(app, deps);
  installErrorHandling(app, deps.log, deps.store);
  return app;
}
