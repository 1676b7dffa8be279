// Runs the app on a port: one line on start, graceful stop on close().
import { serve } from '@hono/node-server';
import type { AddressInfo } from 'node:net';
import { Alerts } from './alerts/alerts.js';
import { anyRule, type AlertRules } from './alerts/rules.js';
import { Webhook } from './alerts/webhook.js';
import { buildApp } from './app.js';
import { Authenticator, type Access } from './auth/authenticator.js';
import { ConfigError, type OtelSettings } from './config.js';
import type { DetectionOptions } from './core/options.js';
import type { RunningGrpc } from './ingest/otlp/grpc.js';
import { OtlpReceiver } from './ingest/otlp/receive.js';
import { DEFAULT_BODY_TIMEOUT_MS } from './ingest/http/body.js';
import { InflightBudget } from './ingest/inflight.js';
import type { ProxySettings, RunningProxy } from './ingest/proxy/proxy.js';
import { DEFAULT_LIMITS, type Limits } from './ingest/limits.js';
import { DEFAULT_QUEUE_LIMIT, Pipeline } from './ingest/pipeline.js';
import { pipelineSink, Tailer, type Format } from './ingest/tail/index.js';
import { reevaluateLogged } from './reevaluation.js';
import { DEFAULT_HEADERS_TIMEOUT_MS, DEFAULT_MAX_CONNECTIONS, httpServerOptions } from './serve/connections.js';
import { DEFAULT_QUERY_BODY_LIMIT } from './serve/grafana/simpod/body.js';
import { startReaders, type ReaderPool } from './serve/readers/pool.js';
import type { PriceOverrides } from './prices/index.js';
import { lockDatabase, type DatabaseLock } from './store/lock.js';
import { checkPatterns } from './ingest/tail/check.js';
import { isPostgresUrl, openStore } from './store/open.js';
import type { Store } from './store/store.js';
import { Counters } from './telemetry/counters.js';
import { seedCounters } from './telemetry/stored-counts.js';
import type { BreakExport } from './telemetry/export.js';
import { createLogger, type Logger } from './telemetry/logfmt.js';
import type { SelfTracing } from './telemetry/tracing.js';
import { Teardown, type Closers } from './teardown.js';

export interface ServerOptions {
  host: string;
  port: number;
  db: string;
  bodyLimit: number;
  /** Largest body of a read request (Grafana queries); DEFAULT_QUERY_BODY_LIMIT when absent. */
  queryBodyLimit?: number;
  detection: DetectionOptions;
  /** The price overrides behind detection's prices, for reader threads to price the insights alike. */
  priceOverrides?: PriceOverrides;
  synchronous: 'normal' | 'full';
  project: string;
  /** Connections to a PostgreSQL database (--pg-pool); its default when absent. */
  pgPool?: number;
  /** Age past which raw turns are deleted; undefined keeps them. */
  retainMs?: number | undefined;
  /** Age past which rollups are deleted; undefined keeps them. */
  retainRollupsMs?: number | undefined;
  /** Serve without keys on an address other than loopback, after every key was revoked, and through a proxy. */
  insecureNoAuth?: boolean;
  /** Host names a server without keys answers besides localhost and IP addresses (--public-url). */
  publicHosts?: readonly string[];
  /** URL template of a break's trace in the user's tracer (--trace-link, serve/trace-link.ts); absent: no link. */
  traceLink?: string | undefined;
  /** Requests per second per API key. */
  rateLimit?: number;
  /** Events waiting to be written, past which ingest answers 429; DEFAULT_QUEUE_LIMIT when absent. */
  queueLimit?: number;
  /** Request bodies ingest holds at once, past which it answers 503; four times bodyLimit when absent. */
  inflightLimit?: number | undefined;
  /** How long an ingest body may go without a byte arriving (408); DEFAULT_BODY_TIMEOUT_MS when absent. */
  bodyTimeoutMs?: number;
  /** Connections each port keeps open at once; DEFAULT_MAX_CONNECTIONS when absent. */
  maxConnections?: number;
  /** How long a connection may take to send a request's headers; DEFAULT_HEADERS_TIMEOUT_MS when absent. */
  headersTimeoutMs?: number;
  /** How much one request may carry; the defaults when absent. */
  limits?: Limits;
  /** Bytes the OTLP halves waiting for their partner may hold per project; DEFAULT_WAITING_BYTES when absent. */
  maxWaitingBytes?: number;
  /** Models per project with series of their own in /metrics; DEFAULT_METRIC_MODELS when absent. */
  maxMetricModels?: number;
  /** Threads that answer reads (dashboards, REST) beside the writing main thread; 0 reads on the main thread. */
  readWorkers?: number;
  /** OTLP/gRPC port (0 picks a free one); undefined serves no gRPC. */
  grpcPort?: number | undefined;
  /** Files to follow, as `cachebreak tail` does; undefined follows none. */
  tail?: { patterns: string[]; format: Format | undefined; fromStart: boolean; batch: number; followSymlinks?: boolean } | undefined;
  /** The provider proxy (cachebreak proxy), on `host`; undefined serves none. */
  proxy?: Omit<ProxySettings, 'host'> | undefined;
  /**
   * Whether a SQLite store writes in a thread of its own (store/sqlite/write-thread.ts);
   * by default when the server proxies, so that no write holds up the calls streaming through it.
   */
  writeThread?: boolean;
  /** Regression alert rules, how often they run and where they are sent; undefined: no rule. */
  alerts?: { rules: AlertRules; everyMs: number; webhook: string | undefined } | undefined;
  /** Break export and self-tracing; undefined: neither. */
  otel?: OtelSettings | undefined;
}

/** A port the server cannot listen on: the command exits 1, saying which port and the option that changes it. */
export class CannotListen extends Error {}

/** What a failed listen means, in words: EADDRINUSE and EACCES are the usual ones. */
/** The code of an error in listening on a port, undefined for any other error. */
const listenCode = (error: unknown) =>
  /^(EADDRINUSE|EACCES|EADDRNOTAVAIL)$/.exec((error as NodeJS.ErrnoException).code ?? '')?.[1] ?? /\b(EADDRINUSE|EACCES|EADDRNOTAVAIL)\b/.exec((error as Error).message)?.[1];

function listenProblem(error: unknown): string {
  const code = listenCode(error);
  if (code === 'EADDRINUSE') return 'the port is already in use by another program';
  if (code === 'EACCES') return 'this user may not listen on that port';
  if (code === 'EADDRNOTAVAIL') return 'that address is not one of this machine\'s';
  return (error as Error).message;
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** How long closing waits for queued breaks to reach the export endpoint. */
const EXPORT_FLUSH_MS = 5_000;

/** How long a stop waits for the main port's requests in flight before it cuts their connections. */
const CLOSE_GRACE_MS = 3_000;

/** Resolves when `promise` settles or after `ms`, whichever is first; never rejects. */
function within(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
  return Promise.race([promise.then(() => undefined, () => undefined), timeout]).finally(() => clearTimeout(timer));
}

/**
 * Follows files inside the server (serve --tail): the same checks, Tailer and
 * sink as `cachebreak tail --db`. The tailer is stopped with `ports`, even
 * when its start fails.
 */
async function startTail(tail: NonNullable<ServerOptions['tail']>, pipeline: Pipeline, store: Store, project: string, log: Logger, ports: Closers): Promise<void> {
  const notice = (message: string) => log.info('tail', { message });
  try {
    checkPatterns(tail.patterns, notice);
  } catch (error) {
    throw error instanceof ConfigError ? new ConfigError(`--tail: ${error.message}`) : error;
  }
  const tailer = new Tailer({ ...tail }, pipelineSink(pipeline, store, project), {
    notice,
    rejected: (file, line, error) => {
      pipeline.rejected(project, 'tail', 1);
      log.warn('tail_rejected', { file, line, error });
    },
  });
  ports.add(() => tailer.stop());
  await tailer.start();
  log.info('tail_started', { patterns: tail.patterns, files: tailer.totals().files });
}

/** Says at start whether the server is open, loudly, and what that means. */
function announceAccess(access: Access, keys: Awaited<ReturnType<Store['keyState']>>, options: ServerOptions, log: Logger): void {
  if (access === 'locked') {
    if (keys === 'revoked') log.info('access', { state: 'locked', message: 'every API key is revoked: every request but /healthz and /readyz is refused until a key is created (cachebreak keys create)' });
    return;
  }
  const names = ['localhost', 'an IP address', ...(options.publicHosts ?? [])].join(' or ');
  log.warn('open_access', {
    state: 'open',
    message:
      `no API key: anyone who can connect reads and writes. Requests are answered only when addressed to ${names}` +
      (options.insecureNoAuth ? ', through a proxy too (--insecure-no-auth)' : ', and never through a proxy') +
      '. Lock the server by creating a key: cachebreak keys create --project NAME --scope ingest,read',
  });
}

/** How often retention runs. */
const PRUNE_EVERY_MS = 10 * 60_000;
/** How often OTLP join halves past their age are deleted (they are never paired meanwhile). */
const TRIM_HALVES_EVERY_MS = 60_000;

export interface RunningServer {
  url: string;
  port: number;
  /** The bound OTLP/gRPC port, when gRPC is served. */
  grpcPort: number | undefined;
  /** Why gRPC was asked for but is not served (its port was taken). */
  grpcProblem: string | undefined;
  /** The provider proxy's URL, when it is served. */
  proxyUrl: string | undefined;
  log: Logger;
  /** Whether the server answered without a key when it started (keys created later lock it within a second). */
  access: Access;
  /** Stops accepting, lets in-flight requests finish, then closes the database. */
  close(): Promise<void>;
}

/** Runs retention now and then every PRUNE_EVERY_MS, one run at a time. */
function retention(store: Store, options: ServerOptions, log: Logger): { stop(): void } | undefined {
  if (options.retainMs === undefined && options.retainRollupsMs === undefined) return undefined;
  let running = false;
  const run = async () => {
    if (running) return;
    running = true;
    const now = Date.now();
    try {
      const result = await store.prune({
        ...(options.retainMs !== undefined ? { turnsBefore: now - options.retainMs } : {}),
        ...(options.retainRollupsMs !== undefined ? { rollupsBefore: now - options.retainRollupsMs } : {}),
      });
      if (result.turns + result.rollups > 0) log.info('retention', { deletedTurns: result.turns, deletedRollups: result.rollups });
    } catch (error) {
      log.error('retention_failed', { message: (error as Error).message });
    } finally {
      running = false;
    }
  };
  void run();
  const timer = setInterval(() => void run(), PRUNE_EVERY_MS);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

/** Deletes the OTLP join halves whose age ran out every TRIM_HALVES_EVERY_MS, one run at a time, whether or not new halves come. */
function trimHalves(store: Store, log: Logger): { stop(): Promise<void> } {
  let running: Promise<void> | undefined;
  const timer = setInterval(() => {
    running ??= store
      .trimHalves(Date.now())
      .then(
        () => undefined,
        (error: unknown) => log.error('trim_halves_failed', { message: (error as Error).message }),
      )
      .finally(() => (running = undefined));
  }, TRIM_HALVES_EVERY_MS);
  timer.unref();
  // A run under way finishes before the store closes.
  return {
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}

/**
 * Evaluates the alert rules every `everyMs` over the projects the counters
 * know (stored totals and turns since start): reads of rollup sums, off the
 * ingest path. Undefined when no rule is on.
 */
function startAlerts(settings: ServerOptions['alerts'], store: Store, counters: Counters, log: Logger, ports: Pick<Closers, 'add'>): Alerts | undefined {
  if (settings === undefined || !anyRule(settings.rules)) return undefined;
  const webhook = settings.webhook === undefined ? undefined : new Webhook(settings.webhook, counters, log);
  const projects = () => [...new Set(counters.samples().flatMap((sample) => (sample.name === 'turns' && sample.labels.project !== undefined ? [sample.labels.project] : [])))];
  const alerts = new Alerts({ store, rules: settings.rules, projects, now: Date.now, log, ...(webhook ? { notify: (alert) => webhook.send(alert) } : {}) });
  alerts.start(settings.everyMs);
  ports.add(async () => {
    await alerts.stop();
    webhook?.close();
  });
  return alerts;
}

export async function startServer(options: ServerOptions, stderr: (line: string) => void): Promise<RunningServer> {
  const log = createLogger(stderr);
  // Whatever started is closed by this one list, in reverse: on a failed start as by close().
  const teardown = new Teardown((error) => log.error('close_failed', { message: error.message }));
  try {
    return await start(options, stderr, log, teardown);
  } catch (error) {
    await teardown.run();
    throw error;
  }
}

/** Starts each part and registers how it closes on `teardown`. */
async function start(options: ServerOptions, stderr: (line: string) => void, log: Logger, teardown: Teardown): Promise<RunningServer> {
  const inflightLimit = options.inflightLimit ?? 4 * options.bodyLimit;
  // The largest gzip request holds its body twice: as sent and inflated.
  if (inflightLimit < 2 * options.bodyLimit) {
    throw new ConfigError(`--inflight-limit (${inflightLimit} bytes) must be at least twice --body-limit (${options.bodyLimit} bytes), or the largest request could never be read`);
  }
  // One client may hold half the budget, and always enough for the largest request.
  const bodyTimeoutMs = options.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS;
  const maxConnections = options.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
  const headersTimeoutMs = options.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS;
  const inflight = new InflightBudget(inflightLimit, Math.max(Math.floor(inflightLimit / 2), 2 * options.bodyLimit));
  // A PostgreSQL database is shared by any number of servers: no lock, no checkpointer, no reader threads
  // (reads are queries like any other on the pool), and migrations run under an advisory lock as it opens.
  const shared = isPostgresUrl(options.db);
  const store = await openStore(options.db, options.detection, {
    ...(options.pgPool !== undefined ? { pgPool: options.pgPool } : {}),
    sqlite: { synchronous: options.synchronous, backgroundCheckpoint: true, mustWrite: true },
    // Ingest alone keeps its writes here: a second thread costs ~100 MB and adds no ingest throughput on two cores.
    ...((options.writeThread ?? options.proxy !== undefined) ? { writeThread: { priceOverrides: options.priceOverrides ?? {}, stderr } } : {}),
  });
  let lock: DatabaseLock | undefined;
  teardown.add(() => store.close().finally(() => lock?.release()));
  if (!shared) lock = lockDatabase(options.db);
  const openWithoutKeys = isLoopback(options.host) || options.insecureNoAuth === true;
  if (!openWithoutKeys && !(await store.hasActiveKeys())) {
    throw new ConfigError(
      `refusing to serve ${options.host} with no API keys: anyone who can connect could read and write. ` +
        'Create keys first (cachebreak keys create --project NAME --scope ingest,read), ' +
        'or pass --insecure-no-auth (e.g. behind a proxy that authenticates)',
    );
  }
  if (await store.needsReevaluation()) {
    await reevaluateLogged(store, log, 'the database was written under older detection rules');
  }
  const counters = new Counters(options.maxMetricModels);
  seedCounters(counters, await store.storedCounts());
  const limits = options.limits ?? DEFAULT_LIMITS;
  const pipeline = new Pipeline(store, counters, log, { queueLimit: options.queueLimit ?? DEFAULT_QUEUE_LIMIT, limits });
  const perSecond = options.rateLimit ?? 100;
  const auth = new Authenticator(store, {
    openProject: options.project,
    openWithoutKeys,
    insecureNoAuth: options.insecureNoAuth === true,
    publicHosts: options.publicHosts ?? [],
    rateLimit: { perSecond, burst: 2 * perSecond },
    now: Date.now,
    log,
  });
  const access = await auth.access();
  announceAccess(access, await store.keyState(), options, log);
  // The OpenTelemetry SDK takes most of a second to load: only when it is used.
  const otel = options.otel;
  let breakExport: BreakExport | undefined;
  let tracing: SelfTracing | undefined;
  teardown.add(() => within(Promise.all([breakExport?.shutdown(), tracing?.shutdown()]), EXPORT_FLUSH_MS));
  if (otel?.breaks) {
    breakExport = (await import('./telemetry/export.js')).startBreakExport(otel.breaks, otel.serviceName);
    pipeline.subscribe(breakExport.emit);
    pipeline.subscribeRevisions(breakExport.emitRevision);
  }
  if (otel?.traces) tracing = (await import('./telemetry/tracing.js')).startSelfTracing(otel.traces, otel.serviceName);
  // Read routes go to reader threads; writes, key checks and retention stay here.
  const readWorkers = shared ? 0 : (options.readWorkers ?? 1);
  let readers: ReaderPool | undefined;
  try {
    if (readWorkers > 0) readers = await startReaders({ path: options.db, queryBodyLimit: options.queryBodyLimit ?? DEFAULT_QUERY_BODY_LIMIT, priceOverrides: options.priceOverrides ?? {}, ...(options.traceLink === undefined ? {} : { traceLink: options.traceLink }) }, readWorkers, stderr);
  } catch (error) {
    throw new ConfigError(`cannot start the reader threads (${(error as Error).message}); --read-workers 0 answers reads on the main thread`);
  }
  teardown.add(() => readers?.close());
  const otlp = new OtlpReceiver({ pipeline, counters, now: Date.now, limits, maxWaitingBytes: options.maxWaitingBytes });
  const alerts = startAlerts(options.alerts, store, counters, log, teardown);
  const app = buildApp({
    store,
    prices: options.detection.prices,
    pipeline,
    counters,
    log,
    bodyLimit: options.bodyLimit,
    ...(options.queryBodyLimit !== undefined ? { queryBodyLimit: options.queryBodyLimit } : {}),
    auth,
    limits,
    now: Date.now,
    otlp,
    inflight,
    bodyTimeoutMs,
    ...(readers ? { readers } : {}),
    ...(alerts ? { alerts } : {}),
    ...(options.traceLink === undefined ? {} : { traceLink: options.traceLink }),
    ...(tracing ? { selfTracing: tracing.middleware } : {}),
  });
  // Every way in stops accepting at once, then lets its requests finish.
  const ports = teardown.together();
  let server: ReturnType<typeof serve>;
  try {
    server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
      const serverOptions = httpServerOptions(headersTimeoutMs);
      const started = serve({ fetch: app.fetch, hostname: options.host, port: options.port, serverOptions }, () => resolve(started));
      started.once('error', reject);
    });
  } catch (error) {
    throw new CannotListen(`cannot serve HTTP on ${options.host}:${options.port}: ${listenProblem(error)}; choose another --port (CACHEBREAK_PORT)`);
  }
  ports.add(
    () =>
      new Promise<void>((resolve) => {
        // Requests in flight finish, or are cut after CLOSE_GRACE_MS (a write waiting on a locked database): unanswered, they are sent again.
        const cut = setTimeout(() => 'closeAllConnections' in server && server.closeAllConnections(), CLOSE_GRACE_MS);
        server.close(() => {
          clearTimeout(cut);
          resolve();
        });
        if ('closeIdleConnections' in server) server.closeIdleConnections();
      }),
  );
  server.maxConnections = maxConnections;
  const { port } = server.address() as AddressInfo;
  let grpc: RunningGrpc | undefined;
  let grpcProblem: string | undefined;
  try {
    if (options.grpcPort !== undefined) {
      const { startGrpc } = await import('./ingest/otlp/grpc.js');
      grpc = await startGrpc(options.host, options.grpcPort, { receiver: otlp, auth, log, bodyLimit: options.bodyLimit, inflight, bodyTimeoutMs, maxConnections });
      ports.add(() => grpc?.close());
    }
  } catch (error) {
    // gRPC is one of several ways in: a port taken (often by a local OpenTelemetry Collector
    // or Jaeger on 4317) leaves HTTP serving, with one warning.
    grpcProblem = `${listenProblem(error)}; OTLP over HTTP works on the HTTP port. Choose another --grpc-port (CACHEBREAK_GRPC_PORT), or --grpc-port off`;
    log.warn('grpc_not_served', { port: options.grpcPort, message: `cannot serve OTLP/gRPC on ${options.host}:${options.grpcPort}: ${grpcProblem}` });
  }
  let proxy: RunningProxy | undefined;
  try {
    if (options.proxy !== undefined) {
      const { startProxy } = await import('./ingest/proxy/proxy.js');
      proxy = await startProxy(
        { ...options.proxy, host: options.host },
        // The main port's limits, and its in-flight budget shared: both ports together hold at most --inflight-limit.
        { pipeline, counters, log, stderr, auth, store, limits, bodyLimit: options.bodyLimit, inflight, bodyTimeoutMs, maxConnections, headersTimeoutMs, openProject: options.project, now: Date.now },
      );
      ports.add(() => proxy?.close());
    }
  } catch (error) {
    // Only a port problem is one another --proxy-port solves; anything else (the keys unreadable) is said as it is.
    if (listenCode(error) === undefined) throw error;
    throw new CannotListen(`cannot serve the proxy on ${options.host}:${options.proxy?.port}: ${listenProblem(error)}; choose another --proxy-port`);
  }
  const prune = retention(store, options, log);
  if (prune) ports.add(() => prune.stop());
  const trim = trimHalves(store, log);
  ports.add(() => trim.stop());
  if (options.tail) await startTail(options.tail, pipeline, store, options.project, log, ports);
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `http://${host}:${port}`,
    port,
    grpcPort: grpc?.port,
    grpcProblem,
    proxyUrl: proxy?.url,
    log,
    access,
    close: () => teardown.run(),
  };
}
