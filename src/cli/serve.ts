import { ConfigError, detectionOf, limitsOf, otelOf, type OptionValues, type OtelSettings } from '../config.js';
import { startServer, type RunningServer, type ServerOptions } from '../server.js';
import { shownDb } from '../store/open.js';
import { rejectStrayArguments, type Command, type Io } from './command.js';

export const SERVE_OPTIONS = ['host', 'port', 'db', 'body-limit', 'query-body-limit', 'inflight-limit', 'body-timeout', 'max-connections', 'headers-timeout', 'min-miss-tokens', 'miss-ratio', 'min-cacheable', 'prices', 'synchronous', 'project', 'retain', 'retain-rollups', 'insecure-no-auth', 'public-url', 'rate-limit', 'queue-limit', 'grpc-port', 'otlp-export-endpoint', 'tail', 'format', 'from-start', 'follow-symlinks', 'batch', 'max-events', 'max-string', 'max-tools', 'max-attributes', 'max-json', 'max-waiting-bytes', 'max-metric-models', 'read-workers', 'pg-pool', 'alert-cache-rate-below', 'alert-extra-cost-above', 'alert-new-reason', 'alert-window', 'alert-min-turns', 'alert-every', 'alert-webhook', 'trace-link'] as const;

export type ServeOptionName = (typeof SERVE_OPTIONS)[number];

export const SERVE_DETAILS = [
  'Stops on SIGINT or SIGTERM: it stops accepting, finishes requests in flight (cut after 3 s: unanswered, they are safe to send again) and closes the database (a statement still waiting after 2 s more fails).',
  'With --tail, it also follows those files as "cachebreak tail --db" does (see cachebreak tail --help), under --project;',
  '--format, --from-start, --follow-symlinks and --batch apply to them.',
  'One server per SQLite file: it holds DB.lock (its pid) while it runs, and a second serve on the same file exits 1.',
  'import --db, tail --db and reevaluate take no lock (SQLite serialises their writes): use them on a file no server',
  'holds, and import --server to send to a running one.',
  'With --db postgres://user:password@host:5432/database, any number of servers share one PostgreSQL database (behind a',
  'load balancer, say): no DB.lock, reads on the main thread (--read-workers does not apply), migrations run at start',
  '(one server applies them, the others wait), and each server keeps --pg-pool connections. Events of one session may',
  'reach different servers in any order: the stored result is the same. Retention runs on one server at a time.',
  'Exit code: 0 once stopped; 1 when the database cannot be opened or written (a read-only file, a missing',
  'or read-only directory, a file another server or process holds) or the HTTP port is taken, before anything',
  'listens; 2 for a usage error.',
].join('\n');

/** A URL as printed: without the user and password it may carry. */
function shownUrl(url: string): string {
  const parsed = new URL(url);
  parsed.username = '';
  parsed.password = '';
  return parsed.href;
}

/**
 * What `serve` prints once listening: the line supervisors and scripts wait
 * for, then where the page, the OTLP endpoints and the break export are.
 */
function startLines(server: RunningServer, values: OptionValues<ServeOptionName>, otel: OtelSettings): string {
  const host = new URL(server.url).hostname;
  const grpc = server.grpcPort === undefined ? '' : `, OTLP/gRPC on ${host}:${server.grpcPort}`;
  const access = server.access === 'open' ? 'open: no API key' : 'locked: API keys required';
  const proxied = server.proxyUrl === undefined ? '' : `, proxy on ${server.proxyUrl}`;
  const grpcState =
    server.grpcPort !== undefined ? `${host}:${server.grpcPort}` : server.grpcProblem !== undefined ? `not served (port ${values['grpc-port']}: ${server.grpcProblem})` : 'off (--grpc-port off)';
  const breaks = otel.breaks;
  const exported = breaks === undefined ? 'off (--otlp-export-endpoint URL sends every break to your OpenTelemetry collector)' : `on, to ${shownUrl(breaks.url)} (${breaks.protocol})`;
  return [
    `cachebreak listening on ${server.url}${grpc}${proxied} (database ${shownDb(values.db)}; ${access})`,
    `  page:          ${server.url}/`,
    `  OTLP/HTTP:     ${server.url}/v1/logs, /v1/traces, /v1/metrics`,
    `  OTLP/gRPC:     ${grpcState}`,
    `  break export:  ${exported}`,
    '',
  ].join('\n');
}

/** Runs the server until SIGINT or SIGTERM: `serve`, and `proxy` with its proxy. */
export async function runServer(values: OptionValues<ServeOptionName>, io: Io, proxy?: ServerOptions['proxy']): Promise<number> {
  if (values.retain !== undefined && values['retain-rollups'] !== undefined && values['retain-rollups'] < values.retain) {
    throw new ConfigError('--retain-rollups: must be at least --retain (dashboards read rollups of the turns kept)');
  }
  const otel = otelOf(values['otlp-export-endpoint'], io.env);
  const server = await startServer(
    {
      host: values.host,
      port: values.port,
      db: values.db,
      bodyLimit: values['body-limit'],
      queryBodyLimit: values['query-body-limit'],
      inflightLimit: values['inflight-limit'],
      bodyTimeoutMs: values['body-timeout'],
      maxConnections: values['max-connections'],
      headersTimeoutMs: values['headers-timeout'],
      detection: detectionOf(values),
      priceOverrides: values.prices,
      synchronous: values.synchronous,
      project: values.project,
      retainMs: values.retain,
      retainRollupsMs: values['retain-rollups'],
      insecureNoAuth: values['insecure-no-auth'],
      publicHosts: values['public-url'],
      ...(values['trace-link'] === '' ? {} : { traceLink: values['trace-link'] }),
      rateLimit: values['rate-limit'],
      queueLimit: values['queue-limit'],
      limits: limitsOf(values),
      maxWaitingBytes: values['max-waiting-bytes'],
      maxMetricModels: values['max-metric-models'],
      readWorkers: values['read-workers'],
      pgPool: values['pg-pool'],
      grpcPort: values['grpc-port'] === 'off' ? undefined : values['grpc-port'],
      otel,
      alerts: {
        rules: {
          cacheRateBelow: values['alert-cache-rate-below'],
          extraCostAbove: values['alert-extra-cost-above'],
          newBreakReason: values['alert-new-reason'],
          windowMs: values['alert-window'],
          minTurns: values['alert-min-turns'],
        },
        everyMs: values['alert-every'],
        webhook: values['alert-webhook'] === '' ? undefined : values['alert-webhook'],
      },
      tail:
        values.tail.length === 0
          ? undefined
          : {
              patterns: values.tail,
              format: values.format === 'auto' ? undefined : values.format,
              fromStart: values['from-start'],
              batch: values.batch,
              followSymlinks: values['follow-symlinks'],
            },
      proxy,
    },
    io.stderr,
  );
  // Handlers first: a supervisor may signal as soon as it reads the listening line.
  const stopped = new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      server.log.info('shutdown', { signal });
      void server.close().then(resolve);
    };
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
  });
  io.stdout(startLines(server, values, otel));
  await stopped;
  return 0;
}

export const serveCommand: Command<ServeOptionName> = {
  name: 'serve',
  summary: 'Run the cachebreak server: ingest (HTTP, OTLP), REST API, Grafana endpoints and /metrics.',
  usage: 'serve [options]',
  options: SERVE_OPTIONS,
  details: SERVE_DETAILS,
  run: ({ values, positionals }, io) => {
    rejectStrayArguments('serve', SERVE_OPTIONS, positionals, io.env);
    return runServer(values, io);
  },
};
