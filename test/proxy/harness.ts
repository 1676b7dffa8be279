// The server with its proxy, in-process on 127.0.0.1 over a fresh SQLite
// file (or the database `db` names, of either store), in front of three mock
// upstreams (one per provider API).
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { SERVICE_DETECTION } from '../../src/prices/index.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { tempDir } from '../helpers.js';
import { isPostgresUrl, PG_POOL } from '../store-under-test.js';
import { anthropicAnswer, chatAnswer, geminiAnswer, mockUpstream, responsesAnswer, type MockUpstream, type UsageFields } from './upstreams.js';

export interface ProxyHarness {
  server: RunningServer;
  proxy: string;
  db: string;
  log: string[];
  anthropic: MockUpstream & { usage: UsageFields };
  openai: MockUpstream & { usage: UsageFields };
  gemini: MockUpstream & { usage: UsageFields };
  get<T>(path: string): Promise<T>;
  /** A counter's value on /metrics, by its labels. */
  metric(name: string, labels: Record<string, string>): Promise<number>;
  close(): Promise<void>;
}

const running: ProxyHarness[] = [];
afterEach(async () => {
  for (const harness of running.splice(0)) await harness.close();
});

function withUsage(mock: MockUpstream, usage: UsageFields): MockUpstream & { usage: UsageFields } {
  return Object.assign(mock, { usage });
}

export async function startProxyHarness(
  options: { host?: string; insecureNoAuth?: boolean; db?: string; rateLimit?: number; providerDiagnostics?: boolean; bodyLimit?: number; writeThread?: boolean } = {},
): Promise<ProxyHarness> {
  const anthropic = withUsage(await mockUpstream((request) => anthropicAnswer(request, anthropic.usage, `req_${anthropic.received.length}`)), {});
  const openai = withUsage(
    await mockUpstream((request) => (request.url.endsWith('/responses') ? responsesAnswer(request, openai.usage) : chatAnswer(request, openai.usage))),
    {},
  );
  const gemini = withUsage(await mockUpstream((request) => geminiAnswer(request, gemini.usage)), {});
  const db = options.db ?? join(tempDir(), 'cachebreak.db');
  const log: string[] = [];
  const server = await startServer(
    {
      host: options.host ?? '127.0.0.1',
      port: 0,
      db,
      bodyLimit: options.bodyLimit ?? 1024 * 1024,
      detection: SERVICE_DETECTION,
      synchronous: 'normal',
      project: 'default',
      readWorkers: 0,
      // Started in-process, the write thread compiles its modules from source (half a second a server):
      // test/proxy/busy-store.test.ts asks for it, and the proxy's spawned servers (test/e2e, test/proxy) run it.
      writeThread: options.writeThread ?? false,
      ...(isPostgresUrl(db) ? { pgPool: PG_POOL } : {}),
      ...(options.insecureNoAuth ? { insecureNoAuth: true } : {}),
      ...(options.rateLimit !== undefined ? { rateLimit: options.rateLimit } : {}),
      proxy: { port: 0, upstreams: { anthropic: anthropic.url, openai: `${openai.url}/`, gemini: gemini.url }, providerDiagnostics: options.providerDiagnostics === true },
    },
    (line) => log.push(line),
  );
  const get = async <T>(path: string): Promise<T> => {
    const response = await fetch(`${server.url}${path}`);
    if (!response.ok) throw new Error(`${path} answered ${response.status}`);
    return (await response.json()) as T;
  };
  let closed: Promise<void> | undefined;
  const harness: ProxyHarness = {
    server,
    proxy: server.proxyUrl!,
    db,
    log,
    anthropic,
    openai,
    gemini,
    get,
    async metric(name, labels) {
      const text = await (await fetch(`${server.url}/metrics`)).text();
      const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
      const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && wanted.every((w) => l.includes(w)));
      return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
    },
    close: () =>
      (closed ??= (async () => {
        await server.close();
        await Promise.all([anthropic.close(), openai.close(), gemini.close()]);
      })()),
  };
  running.push(harness);
  return harness;
}
