// Runs the app on a port: one line on start, graceful stop on close().
import { serve } from '@hono/node-server';
import type { AddressInfo } from 'node:net';
import { buildApp } from './app.js';
import type { DetectionOptions } from './core/options.js';
import { Pipeline } from './ingest/pipeline.js';
import { SqliteStore } from './store/sqlite/store.js';
import { Counters } from './telemetry/counters.js';
import { createLogger, type Logger } from './telemetry/logfmt.js';

export interface ServerOptions {
  host: string;
  port: number;
  db: string;
  bodyLimit: number;
  detection: DetectionOptions;
  synchronous: 'normal' | 'full';
  project: string;
  /** Age past which raw turns are deleted; undefined keeps them. */
  retainMs?: number | undefined;
  /** Age past which rollups are deleted; undefined keeps them. */
  retainRollupsMs?: number | undefined;
}

/** How often retention runs. */
const PRUNE_EVERY_MS = 10 * 60_000;

export interface RunningServer {
  url: string;
  port: number;
  log: Logger;
  /** Stops accepting, lets in-flight requests finish, then closes the database. */
  close(): Promise<void>;
}

/** Runs retention now and then every PRUNE_EVERY_MS, one run at a time. */
function retention(store: SqliteStore, options: ServerOptions, log: Logger): { stop(): void } | undefined {
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

export async function startServer(options: ServerOptions, stderr: (line: string) => void): Promise<RunningServer> {
  const log = createLogger(stderr);
  const store = new SqliteStore(options.db, options.detection, { synchronous: options.synchronous, backgroundCheckpoint: true });
  const counters = new Counters();
  const pipeline = new Pipeline(store, counters, log);
  const app = buildApp({
    store,
    pipeline,
    counters,
    log,
    bodyLimit: options.bodyLimit,
    project: options.project,
    now: Date.now,
  });
  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const started = serve({ fetch: app.fetch, hostname: options.host, port: options.port }, () => resolve(started));
    started.once('error', reject);
  });
  const { port } = server.address() as AddressInfo;
  const prune = retention(store, options, log);
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${host}:${port}`,
    port,
    log,
    close() {
      closing ??= new Promise<void>((resolve) => {
        prune?.stop();
        server.close(() => resolve());
        if ('closeIdleConnections' in server) server.closeIdleConnections();
      }).then(() => store.close());
      return closing;
    },
  };
}
