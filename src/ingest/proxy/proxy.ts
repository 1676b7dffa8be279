// The provider proxy: a harness points its base URL here (one path prefix per
// provider API) and every request is forwarded, unchanged, to that provider's
// configured upstream, never to a host the request names. The response is
// streamed back byte for byte as it arrives; a copy of its chunks is read on
// the side for usage. Once the client has the whole answer, the call is
// observed in a thread of its own (observer.ts), and its snapshot and usage
// go as one event to a bounded queue in front of the pipeline
// (observations.ts). Nothing on a call's path waits on the database:
// access is decided from a copy of the keys in memory (auth/key-copy.ts), and
// observing is best effort: a slow, locked or failing store never holds up or
// fails a proxied call; what is not stored is counted
// (cachebreak_proxy_observations_total) and logged.
import { randomUUID } from 'node:crypto';
import { Agent as HttpAgent, createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Authenticator } from '../../auth/authenticator.js';
import { KeyCopy } from '../../auth/key-copy.js';
import { PROXY_HEADERS } from '../../auth/open-access.js';
import { CachebreakError } from '../../errors.js';
import type { Store } from '../../store/store.js';
import type { Counters } from '../../telemetry/counters.js';
import type { Logger } from '../../telemetry/logfmt.js';
import { LogThrottle } from '../../telemetry/throttle.js';
import { httpServerOptions } from '../../serve/connections.js';
import { stalled } from '../http/body.js';
import { clientOf, type InflightBudget } from '../inflight.js';
import type { Limits } from '../limits.js';
import type { Pipeline } from '../pipeline.js';
import { anthropicApi } from './anthropic.js';
import type { ProviderApi, ProxyProvider } from './api.js';
import { geminiApi } from './gemini.js';
import { ObservationQueue } from './observations.js';
import { startObserver } from './observer.js';
import { openaiApi } from './openai.js';
import { RequestCopy, watchBody } from './request-body.js';
import { ResponseReader } from './response.js';

const APIS: readonly ProviderApi[] = [anthropicApi, openaiApi, geminiApi];

/** The header a client sends its cachebreak API key in, when the server has keys; never forwarded. */
export const KEY_HEADER = 'x-cachebreak-key';

/** Headers of one connection, not of the message (RFC 9110 §7.6.1), and the proxy's own. */
const NOT_FORWARDED = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'proxy-authenticate', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host', 'expect']);

/** How long closing waits for calls in flight (streams may run for minutes) before cutting them. */
const CLOSE_GRACE_MS = 10_000;

export interface ProxySettings {
  host: string;
  port: number;
  /** Base URL per provider, without a trailing slash. */
  upstreams: Readonly<Record<ProxyProvider, string>>;
  /** --provider-diagnostics: ask Anthropic for its cache diagnostics (DIAGNOSIS_BETA) on every call. */
  providerDiagnostics?: boolean;
}

/** Anthropic's beta for cache diagnostics, added to anthropic-beta when the user opts in. */
export const DIAGNOSIS_BETA = 'cache-diagnosis-2026-04-07';

/** The anthropic-beta value with DIAGNOSIS_BETA among the client's betas, once. */
export function withDiagnosisBeta(sent: string | string[] | undefined): string {
  const betas = (Array.isArray(sent) ? sent : [sent ?? ''])
    .flatMap((value) => value.split(','))
    .map((beta) => beta.trim())
    .filter((beta) => beta !== '');
  return [...new Set([...betas, DIAGNOSIS_BETA])].join(',');
}

export interface ProxyDeps {
  pipeline: Pipeline;
  counters: Counters;
  log: Logger;
  auth: Authenticator;
  /** Where the copy of the API keys the proxy decides from is read. */
  store: Store;
  limits: Limits;
  /** The largest request or response body read for observation; larger ones are forwarded, not observed. */
  bodyLimit: number;
  /** The budget ingest holds its bodies in: the copies kept for observation count in it too. */
  inflight: InflightBudget;
  /** How long a request body may go without a byte arriving (--body-timeout): past it, 408. */
  bodyTimeoutMs: number;
  /** The main port's connection limits (--max-connections, --headers-timeout), applied to the proxy's port too. */
  maxConnections: number;
  headersTimeoutMs: number;
  /** The project counted for requests refused before a key named one. */
  openProject: string;
  now: () => number;
  /** Where the observer thread's log lines go, already formatted. */
  stderr: (line: string) => void;
}

export interface RunningProxy {
  url: string;
  port: number;
  /** Stops accepting, lets calls in flight finish (cut after a grace period), and waits a bounded time for their observations. */
  close(): Promise<void>;
}

interface Upstream {
  url: URL;
  /** The upstream's base path, put before every forwarded path. */
  basePath: string;
  request: typeof httpRequest;
  agent: HttpAgent;
}

function upstreamOf(base: string): Upstream {
  const url = new URL(base);
  const https = url.protocol === 'https:';
  return {
    url,
    basePath: url.pathname.replace(/\/$/, ''),
    request: https ? httpsRequest : httpRequest,
    agent: https ? new HttpsAgent({ keepAlive: true }) : new HttpAgent({ keepAlive: true }),
  };
}

/**
 * Whether a path has a `..` segment, however written (%2e%2e in any case,
 * after an encoded / or \): forwarded, it could reach the upstream outside
 * its base path.
 */
function climbs(target: string): boolean {
  const path = target.split('?', 1)[0]!.replace(/%2e/gi, '.').replace(/%2f/gi, '/').replace(/%5c/gi, '\\');
  return path.split(/[/\\]/).includes('..');
}

/** The API a request is for and its path after the prefix; undefined for an absolute URI or an unknown prefix. */
function routeOf(target: string): { api: ProviderApi; rest: string } | undefined {
  if (!target.startsWith('/')) return undefined;
  for (const api of APIS) {
    const next = target[api.prefix.length];
    if (target.startsWith(api.prefix) && (next === undefined || next === '/' || next === '?')) {
      const rest = target.slice(api.prefix.length);
      return { api, rest: rest.startsWith('/') ? rest : `/${rest}` };
    }
  }
  return undefined;
}

/**
 * Headers without those of the connection (and those the Connection header
 * names), or the proxy's own. As an object: Node frames a message by the
 * content-length it finds there (given as raw pairs, it would add chunking).
 */
function passedOn(headers: IncomingHttpHeaders, dropOwn: boolean): OutgoingHttpHeaders {
  const named = new Set(String(headers.connection ?? '').split(',').map((token) => token.trim().toLowerCase()));
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || NOT_FORWARDED.has(name) || named.has(name) || (dropOwn && name.startsWith('x-cachebreak-'))) continue;
    out[name] = value;
  }
  return out;
}

/** `status`: the error's own, or 502 when the proxy stands in for an upstream it could not reach. */
function sendError(res: ServerResponse, error: CachebreakError, status: number = error.status): void {
  if (res.headersSent || res.destroyed) return;
  const body = JSON.stringify({ error: { code: error.code, message: error.message, hint: error.hint } });
  const headers: Record<string, string | number> = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) };
  if (error.retryAfter !== undefined) headers['retry-after'] = error.retryAfter;
  res.writeHead(status, headers).end(body);
}

const UNKNOWN_PATH = new CachebreakError(
  'not_found',
  'the proxy forwards only /anthropic/…, /openai/… and /gemini/… (to their configured upstreams)',
  'point the harness at http://HOST:PORT/anthropic, http://HOST:PORT/openai/v1 or http://HOST:PORT/gemini; see cachebreak proxy --help',
);

const CLIMBING_PATH = new CachebreakError(
  'bad_request',
  'the proxied path has a ".." segment (or %2e%2e): the proxy forwards only below the configured upstream base path',
  'send the path the provider documents, without ".." segments',
);

export async function startProxy(settings: ProxySettings, deps: ProxyDeps): Promise<RunningProxy> {
  const { counters, log, pipeline } = deps;
  const upstreams = Object.fromEntries(Object.entries(settings.upstreams).map(([provider, base]) => [provider, upstreamOf(base)])) as Record<ProxyProvider, Upstream>;
  const repeated = new LogThrottle();
  /** Observations being built (the response's usage unpacked, the request body read in the observer thread), before the queue. */
  const observing = new Set<Promise<void>>();
  const keys = new KeyCopy(deps.store, deps.auth, log);
  await keys.load();
  const observer = await startObserver({ limits: deps.limits, bodyLimit: deps.bodyLimit }, deps.stderr);

  const countRequest = (project: string, provider: string, outcome: string) => counters.inc('proxyRequests', { project, provider, outcome });
  const countCall = (project: string, provider: string, outcome: string) => counters.inc('proxyObservations', { project, provider, outcome });
  /** At most one line per kind (and `about`) and minute: a failing store or upstream fails every call. */
  const warn = (kind: string, fields: Record<string, string>, about = '') => {
    const suppressed = repeated.admit(`${kind}\u0000${fields.provider}\u0000${about}`);
    if (suppressed !== undefined) log.warn(kind, { ...fields, ...(suppressed > 0 ? { suppressed } : {}) });
  };
  const queue = new ObservationQueue(pipeline, {
    count(observed, outcome) {
      countCall(observed.project, observed.provider, outcome);
      if (outcome === 'queue_full') warn('proxy_observations_dropped', { provider: observed.provider, message: 'the database is not keeping up: calls are forwarded, not stored' });
    },
    storeFailed: (observed, error) => warn('proxy_store_failed', { provider: observed.provider, message: (error as Error).message }),
    // Such as an upstream request id that already names a turn of another session: said once a minute per field, naming the latest call.
    rejected: ({ provider, event }, rejection) =>
      warn('proxy_call_rejected', { provider, requestId: event.requestId, field: rejection.field, problem: rejection.problem }, rejection.field),
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const route = routeOf(req.url ?? '');
    if (!route) {
      countRequest(deps.openProject, 'none', 'unknown_path');
      sendError(res, UNKNOWN_PATH);
      return;
    }
    const { api } = route;
    const provider = api.provider;
    if (climbs(route.rest)) {
      countRequest(deps.openProject, provider, 'bad_path');
      sendError(res, CLIMBING_PATH);
      return;
    }
    let project: string;
    let keyId: number | null;
    try {
      const key = req.headers[KEY_HEADER];
      const principal = keys.authorize(typeof key === 'string' ? `Bearer ${key}` : undefined, 'ingest', {
        host: req.headers.host,
        proxyHeader: PROXY_HEADERS.find((name) => req.headers[name] !== undefined),
      });
      project = principal.project;
      keyId = principal.keyId;
    } catch (error) {
      if (!(error instanceof CachebreakError)) throw error;
      countRequest(deps.openProject, provider, 'refused');
      // A refused key is a cachebreak key (the provider's is never looked at): say which header carries it.
      sendError(res, error.code === 'unauthorized' ? new CachebreakError('unauthorized', error.message, `send a cachebreak API key with scope ingest in the ${KEY_HEADER} header; it is not forwarded`) : error);
      return;
    }
    const upstream = upstreams[provider];
    const call = api.observed(req.method ?? '', route.rest.split('?', 1)[0]!);
    const startMs = deps.now();
    const started = performance.now();
    let outcome: string | undefined;
    const settle = (value: string) => {
      if (outcome !== undefined) return;
      outcome = value;
      countRequest(project, provider, value);
    };

    // What reading the call holds (the copy of its body, the answer's text) counts in the in-flight budget.
    const client = clientOf(keyId, req.socket.remoteAddress);
    const copy = call ? new RequestCopy(deps.bodyLimit, deps.inflight.open(client)) : undefined;
    let reader: ResponseReader | undefined;
    let observed = false;
    res.on('close', () => {
      if (observed) return;
      copy?.release();
      reader?.release();
    });
    function outgoing(): OutgoingHttpHeaders {
      const headers = passedOn(req.headers, true);
      if (settings.providerDiagnostics === true && provider === 'anthropic') headers['anthropic-beta'] = withDiagnosisBeta(req.headers['anthropic-beta']);
      return headers;
    }
    const forwarded = upstream.request({
      protocol: upstream.url.protocol,
      hostname: upstream.url.hostname,
      port: upstream.url.port || undefined,
      method: req.method,
      path: upstream.basePath + route.rest,
      headers: outgoing(),
      agent: upstream.agent,
    });
    if (copy) req.on('data', (chunk: Buffer) => copy.push(chunk));
    req.pipe(forwarded);
    req.on('error', () => forwarded.destroy());
    watchBody(req, deps.bodyTimeoutMs, (size) => {
      settle('client_stalled');
      forwarded.destroy();
      if (res.headersSent) res.destroy();
      else sendError(res.setHeader('connection', 'close'), stalled(deps.bodyTimeoutMs, size));
    });

    forwarded.on('error', (error) => {
      if (outcome === 'client_stalled') return;
      if (!res.headersSent) {
        settle('upstream_unreachable');
        warn('proxy_upstream_unreachable', { provider, upstream: upstream.url.origin, message: error.message });
        sendError(res, new CachebreakError('unavailable', `cachebreak proxy: cannot reach ${upstream.url.origin} (${error.message})`, `check --${provider}-upstream and the network`), 502);
      } else {
        settle('upstream_reset');
        res.destroy();
      }
    });

    forwarded.on('response', (answer) => {
      const status = answer.statusCode ?? 502;
      res.writeHead(status, answer.statusMessage, passedOn(answer.headers, false));
      const ok = status >= 200 && status < 300;
      if (call && ok) reader = new ResponseReader(String(answer.headers['content-type'] ?? ''), String(answer.headers['content-encoding'] ?? ''), deps.bodyLimit, deps.inflight.open(client));
      let firstByteMs: number | undefined;
      let endMs = startMs;
      answer.on('data', (chunk: Buffer) => {
        firstByteMs ??= performance.now() - started;
        reader?.push(chunk);
      });
      // The response's end as the upstream sent it: before the client can start its next call.
      answer.on('end', () => (endMs = deps.now()));
      answer.pipe(res);
      answer.on('close', () => {
        if (answer.complete) return;
        settle('upstream_reset');
        res.destroy();
      });
      res.on('finish', () => {
        if (!answer.complete) return;
        settle('forwarded');
        if (!call) return;
        if (!ok) {
          countCall(project, provider, 'upstream_status');
          return;
        }
        if (copy!.skipped) {
          countCall(project, provider, copy!.skipped.outcome);
          warn(`proxy_${copy!.skipped.outcome}`, { provider, error: copy!.skipped.error });
          return;
        }
        observed = true;
        const headerId = String(answer.headers['request-id'] ?? answer.headers['x-request-id'] ?? '');
        const done = (async () => {
          try {
            await observeCall();
          } catch (error) {
            // Observing never fails the call, nor the process: what it could not build is counted and said.
            copy!.release();
            reader!.release();
            countCall(project, provider, 'unreadable');
            warn('proxy_unreadable', { provider, error: (error as Error).message });
          }
        })();
        async function observeCall(): Promise<void> {
          const usage = await reader!.end();
          reader!.release();
          // An answer that could not be read is not observed at all, rather than stored as a snapshot without usage.
          if (reader!.failure !== undefined) {
            copy!.release();
            const why = reader!.overBudget ? 'over_budget' : 'unreadable';
            countCall(project, provider, why);
            warn(`proxy_${why}`, { provider, error: `response: ${reader!.failure}` });
            return;
          }
          const requestId = api.requestIdOf?.(usage) ?? (headerId || randomUUID());
          // The copy counts in the budget until the observer thread is done with it.
          const observation = await observer
            .request({
              project,
              call: {
                provider,
                call: call!,
                requestHeaders: req.headers,
                body: copy!.take(),
                requestId,
                startMs,
                endMs,
                ttftMs: reader!.streamed && firstByteMs !== undefined ? Math.round(firstByteMs) : undefined,
                usage,
              },
            })
            .finally(() => copy!.release());
          if (!observation.ok) {
            countCall(project, provider, 'unreadable');
            warn('proxy_unreadable', { provider, error: observation.error });
            return;
          }
          queue.offer({ project, provider, event: observation.event, withUsage: observation.withUsage });
        }
        observing.add(done);
        void done.finally(() => observing.delete(done));
      });
    });

    res.on('close', () => {
      if (res.writableFinished) return;
      settle('client_closed');
      forwarded.destroy();
    });
  }

  const server = createServer(httpServerOptions(deps.headersTimeoutMs), (req, res) => {
    handle(req, res).catch((error: unknown) => {
      log.error('proxy_failed', { message: (error as Error).message });
      if (!res.headersSent) sendError(res, new CachebreakError('internal', 'internal error in the cachebreak proxy', 'see the server log'));
      else res.destroy();
    });
  });
  server.maxConnections = deps.maxConnections;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(settings.port, settings.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  keys.refreshEverySecond();
  const { port } = server.address() as AddressInfo;
  const host = settings.host.includes(':') ? `[${settings.host}]` : settings.host;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${host}:${port}`,
    port,
    close() {
      closing ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        const cut = setTimeout(() => server.closeAllConnections(), CLOSE_GRACE_MS);
        await closed;
        clearTimeout(cut);
        keys.stop();
        await Promise.all(observing);
        await observer.close();
        await queue.close();
        for (const upstream of Object.values(upstreams)) upstream.agent.destroy();
      })();
      return closing;
    },
  };
}
