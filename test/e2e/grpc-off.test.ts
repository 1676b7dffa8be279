// `cachebreak serve --grpc-port off` (the built CLI as a child process) serves
// no OTLP/gRPC at all: its start line names no gRPC port, the process holds
// no listening socket but the HTTP one, and a gRPC export to the port it
// would otherwise take (the default 4317) is refused, while OTLP over HTTP on
// the main port still stores turns and breaks.
import { OTLPLogExporter as GrpcLogExporter } from '@opentelemetry/exporter-logs-otlp-grpc';
import { OTLPLogExporter as ProtoLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { emitLogs, nativeRecord } from '../otlp/harness.js';
import { breaksOf, turnsOf } from './api.js';
import { REALISTIC_TURNS, seedBreak, seedSession } from './events.js';
import { startServer } from './server.js';

const DEFAULT_GRPC_PORT = 4317;

/** The TCP ports a process listens on, from its socket fds and the kernel's socket tables (Linux). */
function listeningPorts(pid: number): number[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    let target = '';
    try {
      target = readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      continue; // closed between the listing and the read
    }
    const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
    if (inode) inodes.add(inode);
  }
  const ports: number[] = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').trim().split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      // fields: sl, local address:port (hex), remote, state (0A = LISTEN), ..., inode (10th)
      if (fields[3] === '0A' && inodes.has(fields[9]!)) ports.push(parseInt(fields[1]!.split(':')[1]!, 16));
    }
  }
  return ports.sort((a, b) => a - b);
}

/** Whether nothing listens on 127.0.0.1:port: we can bind it ourselves (and let go at once). */
function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

const portOf = (url: string) => Number(new URL(url).port);
const records = seedSession().map(nativeRecord);

describe('--grpc-port off', () => {
  it('the probe sees a gRPC listener when one is served, so its silence below means something', async () => {
    const server = await startServer();
    expect(server.grpcPort).toBeGreaterThan(0);
    expect(listeningPorts(server.pid)).toEqual([portOf(server.url), server.grpcPort!].sort((a, b) => a - b));
  });

  it('serves no gRPC, and OTLP over HTTP still works', async () => {
    // Something else on 4317 would answer (or refuse) for us: the test needs it free.
    expect(await isFree(DEFAULT_GRPC_PORT), `port ${DEFAULT_GRPC_PORT} is in use by another process`).toBe(true);
    const server = await startServer({ args: ['--grpc-port', 'off'] });

    // The start line ("cachebreak listening on URL (database …; …)") has no ", OTLP/gRPC on …" part.
    expect(server.grpcPort).toBeUndefined();
    expect(listeningPorts(server.pid)).toEqual([portOf(server.url)]);
    expect(await isFree(DEFAULT_GRPC_PORT)).toBe(true);

    // A short deadline: the exporter retries UNAVAILABLE until it runs out.
    const grpc = await emitLogs(new GrpcLogExporter({ url: `http://127.0.0.1:${DEFAULT_GRPC_PORT}`, timeoutMillis: 2_000 }), records);
    expect(grpc).toHaveLength(1);
    expect(grpc[0]!.code).not.toBe(0);
    expect(String(grpc[0]!.error)).toMatch(/UNAVAILABLE.*ECONNREFUSED/);

    expect(await emitLogs(new ProtoLogExporter({ url: `${server.url}/v1/logs` }), records)).toEqual([{ code: 0 }]);
    const turns = await turnsOf(server.url, 'sess_A');
    expect(turns.map((t) => [t.requestId, t.state, t.usage?.uncached, t.usage?.read, t.usage?.write])).toEqual(REALISTIC_TURNS.sess_A);
    expect(await breaksOf(server.url)).toEqual([seedBreak()]);
  });
});
