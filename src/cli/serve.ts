import { ConfigError, detectionOf, limitsOf, otelOf, type OptionValues } from '../config.js';
import { startServer, type ServerOptions } from '../server.js';
import type { Command, Io } from './command.js';

export const SERVE_OPTIONS = ['host', 'port', 'db', 'body-limit', 'query-body-limit', 'inflight-limit', 'body-timeout', 'max-connections', 'headers-timeout', 'min-miss-tokens', 'miss-ratio', 'min-cacheable', 'prices', 'synchronous', 'project', 'retain', 'retain-rollups', 'insecure-no-auth', 'public-url', 'rate-limit', 'queue-limit', 'grpc-port', 'otlp-export-endpoint', 'tail', 'format', 'from-start', 'follow-symlinks', 'batch', 'max-events', 'max-string', 'max-tools', 'max-attributes', 'max-json', 'max-waiting-bytes', 'max-metric-models', 'read-workers'] as const;

export type ServeOptionName = (typeof SERVE_OPTIONS)[number];

export const SERVE_DETAILS = [
  'Stops on SIGINT or SIGTERM: it stops accepting, finishes requests in flight and closes the database.',
  'With --tail, it also follows those files as "cachebreak tail --db" does (see cachebreak tail --help), under --project;',
  '--format, --from-start, --follow-symlinks and --batch apply to them.',
  'Exit code: 0 once stopped; 1 when the database cannot be opened or written (a read-only file, a missing',
  'or read-only directory), before anything listens; 2 for a usage error.',
].join('\n');

/** Runs the server until SIGINT or SIGTERM: `serve`, and `proxy` with its proxy. */
export async function runServer(values: OptionValues<ServeOptionName>, io: Io, proxy?: ServerOptions['proxy']): Promise<number> {
  if (values.retain !== undefined && values['retain-rollups'] !== undefined && values['retain-rollups'] < values.retain) {
    throw new ConfigError('--retain-rollups: must be at least --retain (dashboards read rollups of the turns kept)');
  }
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
      synchronous: values.synchronous,
      project: values.project,
      retainMs: values.retain,
      retainRollupsMs: values['retain-rollups'],
      insecureNoAuth: values['insecure-no-auth'],
      publicHosts: values['public-url'],
      rateLimit: values['rate-limit'],
      queueLimit: values['queue-limit'],
      limits: limitsOf(values),
      maxWaitingBytes: values['max-waiting-bytes'],
      maxMetricModels: values['max-metric-models'],
      readWorkers: values['read-workers'],
      grpcPort: values['grpc-port'] === 'off' ? undefined : values['grpc-port'],
      otel: otelOf(values['otlp-export-endpoint'], io.env),
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
  const grpc = server.grpcPort === undefined ? '' : `, OTLP/gRPC on ${new URL(server.url).hostname}:${server.grpcPort}`;
  const access = server.access === 'open' ? 'open: no API key' : 'locked: API keys required';
  const proxied = server.proxyUrl === undefined ? '' : `, proxy on ${server.proxyUrl}`;
  io.stdout(`cachebreak listening on ${server.url}${grpc}${proxied} (database ${values.db}; ${access})\n`);
  await stopped;
  return 0;
}

export const serveCommand: Command<ServeOptionName> = {
  name: 'serve',
  summary: 'Run the cachebreak server: ingest (HTTP, OTLP), REST API, Grafana endpoints and /metrics.',
  usage: 'serve [options]',
  options: SERVE_OPTIONS,
  details: SERVE_DETAILS,
  run: ({ values }, io) => runServer(values, io),
};
