import { ConfigError, detectionOf } from '../config.js';
import { startServer } from '../server.js';
import type { Command } from './command.js';

export const serveCommand: Command<'host' | 'port' | 'db' | 'body-limit' | 'min-miss-tokens' | 'miss-ratio' | 'prices' | 'synchronous' | 'project' | 'retain' | 'retain-rollups'> = {
  name: 'serve',
  summary: 'Run the cachebreak server: ingest (HTTP, OTLP), REST API, Grafana endpoints and /metrics.',
  usage: 'serve [options]',
  options: ['host', 'port', 'db', 'body-limit', 'min-miss-tokens', 'miss-ratio', 'prices', 'synchronous', 'project', 'retain', 'retain-rollups'],
  details: 'Stops on SIGINT or SIGTERM: it stops accepting, finishes requests in flight and closes the database.',
  async run({ values }, io) {
    if (values.retain !== undefined && values['retain-rollups'] !== undefined && values['retain-rollups'] < values.retain) {
      throw new ConfigError('--retain-rollups: must be at least --retain (dashboards read rollups of the turns kept)');
    }
    const server = await startServer(
      {
        host: values.host,
        port: values.port,
        db: values.db,
        bodyLimit: values['body-limit'],
        detection: detectionOf(values),
        synchronous: values.synchronous,
        project: values.project,
        retainMs: values.retain,
        retainRollupsMs: values['retain-rollups'],
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
    io.stdout(`cachebreak listening on ${server.url} (database ${values.db})\n`);
    await stopped;
    return 0;
  },
};
