// Every setting of cachebreak, in one table: its flag, its environment
// variable, its default and how it is checked. `--help` and docs/configuration.md's
// configuration table are generated from it; nothing reads process.env later.
import { readFileSync } from 'node:fs';
import { delimiter } from 'node:path';
import { publicHostOf } from './auth/open-access.js';
import { DEFAULT_DETECTION, type DetectionOptions } from './core/options.js';
import { AUTOMATIC_CACHING, modelPattern } from './core/caching.js';
import { parseDuration } from './core/duration.js';
import { DEFAULT_BODY_TIMEOUT_MS } from './ingest/http/body.js';
import { DEFAULT_LIMITS, type Limits } from './ingest/limits.js';
import { DEFAULT_WAITING_BYTES } from './ingest/otlp/sources/context.js';
import { DEFAULT_QUEUE_LIMIT } from './ingest/pipeline.js';
import { FORMATS as TAIL_FORMATS, type Format as TailFormat } from './ingest/tail/formats/names.js';
import { DEFAULT_HEADERS_TIMEOUT_MS, DEFAULT_MAX_CONNECTIONS, REQUEST_TIMEOUT_MS } from './serve/connections.js';
import { DEFAULT_QUERY_BODY_LIMIT } from './serve/grafana/simpod/body.js';
import { traceLinkProblem } from './serve/trace-link.js';
import { parsePriceOverrides, PriceOverrideError, priceLookup, type PriceOverrides } from './prices/index.js';
import { DEFAULT_METRIC_MODELS } from './telemetry/counters.js';
import { parseTime, TIME_FORMS } from './time.js';

export class ConfigError extends Error {}

type Parser<T> = (raw: string, name: string) => T;

interface Option<T> {
  env: string;
  default: T;
  /** Shown in help instead of the default value. */
  shownDefault?: string;
  valueName: string;
  help: string;
  parse: Parser<T>;
}

const text: Parser<string> = (raw, name) => {
  if (raw.trim() === '') throw new ConfigError(`${name}: must not be empty`);
  return raw;
};

function integer(min: number, max: number): Parser<number> {
  return (raw, name) => {
    const value = Number(raw);
    if (!/^-?\d+$/.test(raw.trim()) || value < min || value > max) {
      throw new ConfigError(`${name}: expected a whole number from ${min} to ${max}, got "${raw}"`);
    }
    return value;
  };
}

const ratio: Parser<number> = (raw, name) => {
  const value = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(value) || value <= 0 || value > 1) {
    throw new ConfigError(`${name}: expected a number above 0 and at most 1, got "${raw}"`);
  }
  return value;
};

const UNITS: Record<string, number> = { '': 1, b: 1, kb: 1e3, mb: 1e6, gb: 1e9, kib: 1024, mib: 1024 ** 2, gib: 1024 ** 3 };

export const bytes: Parser<number> = (raw, name) => {
  const match = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(raw.trim());
  const suffix = match?.[2]?.toLowerCase() ?? 'x';
  const unit = Object.hasOwn(UNITS, suffix) ? UNITS[suffix] : undefined;
  if (!match || unit === undefined) {
    throw new ConfigError(`${name}: expected a size such as 16MiB, 512KB or 1048576, got "${raw}"`);
  }
  return Math.floor(Number(match[1]) * unit);
};

function oneOf<T extends string>(...values: T[]): Parser<T> {
  return (raw, name) => {
    if (!values.includes(raw as T)) throw new ConfigError(`${name}: expected one of ${values.join(', ')}, got "${raw}"`);
    return raw as T;
  };
}

/** RFC 3339 or epoch ms, as the REST API reads its from/to. */
const time: Parser<number | undefined> = (raw, name) => {
  const ms = parseTime(raw);
  if (ms === undefined) throw new ConfigError(`${name}: expected ${TIME_FORMS}, got "${raw.slice(0, 40)}"`);
  return ms;
};

/** A switch: present (or true/1) is on. */
const flag: Parser<boolean> = (raw, name) => {
  if (!['', 'true', '1', 'false', '0'].includes(raw)) throw new ConfigError(`${name}: expected true or false, got "${raw}"`);
  return raw === '' || raw === 'true' || raw === '1';
};

/** A positive duration such as 30d or 12h. */
const duration: Parser<number | undefined> = (raw, name) => {
  const ms = parseDuration(raw);
  if (ms === undefined || ms <= 0) throw new ConfigError(`${name}: expected a duration such as 30d, 12h or 90m, got "${raw}"`);
  return ms;
};

/** A positive amount of US dollars. */
const usd: Parser<number | undefined> = (raw, name) => {
  const value = Number(raw.trim().replace(/^\$/, ''));
  if (raw.trim() === '' || !Number.isFinite(value) || value <= 0) throw new ConfigError(`${name}: expected an amount of USD above 0, such as 5 or 0.50, got "${raw}"`);
  return value;
};

/** A URL as it may be shown: without `user:password@`, which can hold a key. */
export function withoutUserinfo(raw: string): string {
  return raw.replace(/^(\s*[a-z][a-z0-9+.-]*:\/\/)[^/?#]*@/i, '$1');
}

/** An http(s) URL, as OTLP endpoints are given. */
function endpoint(raw: string, name: string): string {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new ConfigError(`${name}: expected a URL such as http://collector:4318, got "${withoutUserinfo(raw)}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(`${name}: expected an http:// or https:// URL, got "${withoutUserinfo(raw)}"`);
  }
  return url.toString();
}

/**
 * Where the proxy forwards a provider's requests: an http(s) URL, its path a
 * prefix of every forwarded path, without credentials (they would be shown in
 * messages), a query or a fragment (they could not be appended to).
 */
function upstream(raw: string, name: string): string {
  const url = new URL(endpoint(raw, name));
  if (url.username !== '' || url.password !== '') {
    throw new ConfigError(`${name}: the URL carries credentials (user:password@); the proxy forwards each client's own credentials, give the URL without them`);
  }
  if (url.search !== '' || url.hash !== '') throw new ConfigError(`${name}: expected a base URL without ?query or #fragment, such as https://api.anthropic.com`);
  return url.toString().replace(/\/$/, '');
}

/** A JSON file of model id (or id prefix) → price, read over the price database. */
const prices: Parser<PriceOverrides> = (raw, name) => {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(raw, 'utf8'));
  } catch (error) {
    throw new ConfigError(`${name}: cannot read "${raw}" as JSON (${(error as Error).message})`);
  }
  try {
    return parsePriceOverrides(parsed);
  } catch (error) {
    if (error instanceof PriceOverrideError) throw new ConfigError(`${name}: "${raw}": ${error.message}`);
    throw error;
  }
};

/** The providers an automatic cache minimum is set for: the core's table, "other" for the rest. */
const MIN_CACHEABLE_KEYS = Object.keys(AUTOMATIC_CACHING);
const MIN_CACHEABLE_SYNTAX = 'expected provider=tokens or provider/model=tokens pairs separated by commas, such as openai=1024,gemini/gemini-3-pro*=4096';

/**
 * "openai=1024,deepseek=64,gemini/gemini-3-pro*=4096": the shortest prompt
 * each provider's automatic cache keeps, or one model's (a model name, or
 * its start followed by *). The most specific model wins over the provider.
 */
const minCacheable: Parser<Readonly<Record<string, number>>> = (raw, name) => {
  const minimums: Record<string, number> = {};
  const pairs = raw.split(',').filter((pair) => pair.trim() !== '');
  if (pairs.length === 0) throw new ConfigError(`${name}: ${MIN_CACHEABLE_SYNTAX}`);
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at < 0) throw new ConfigError(`${name}: ${MIN_CACHEABLE_SYNTAX}, got "${pair.trim()}"`);
    const target = pair.slice(0, at).trim();
    const slash = target.indexOf('/');
    const provider = (slash < 0 ? target : target.slice(0, slash)).trim().toLowerCase();
    if (!MIN_CACHEABLE_KEYS.includes(provider)) {
      throw new ConfigError(`${name}: unknown provider "${(slash < 0 ? target : target.slice(0, slash)).trim()}"; expected one of ${MIN_CACHEABLE_KEYS.join(', ')}`);
    }
    let key = provider;
    if (slash >= 0) {
      // Compared by family, as the core reads it: gpt-4o-2024-08-06 is gpt-4o.
      const model = modelPattern(target.slice(slash + 1));
      if (model === undefined) {
        throw new ConfigError(`${name}: "${target}": expected a model after the provider, a name such as gpt-4o or the start of one followed by *, such as gemini-3-pro*`);
      }
      key = `${provider}/${model}`;
    }
    if (key in minimums) throw new ConfigError(`${name}: ${key} is given twice`);
    minimums[key] = integer(1, 10_000_000)(pair.slice(at + 1).trim(), `${name}: ${key}`);
  }
  return Object.freeze(minimums);
};

export const OPTIONS = {
  host: {
    env: 'CACHEBREAK_HOST',
    default: '127.0.0.1',
    valueName: 'ADDRESS',
    help: 'Address to listen on',
    parse: text,
  } satisfies Option<string>,
  port: {
    env: 'CACHEBREAK_PORT',
    default: 4318,
    valueName: 'PORT',
    help: 'HTTP port (REST, ingest, OTLP/HTTP, Grafana, /metrics); 0 picks a free one',
    parse: integer(0, 65535),
  } satisfies Option<number>,
  db: {
    env: 'CACHEBREAK_DB',
    default: './cachebreak.db',
    valueName: 'FILE|URL',
    help: 'SQLite database file, or postgres://user:password@host:5432/database for a PostgreSQL database that any number of servers share (created and migrated on start)',
    parse: text,
  } satisfies Option<string>,
  'pg-pool': {
    env: 'CACHEBREAK_PG_POOL',
    default: 10,
    valueName: 'N',
    help: 'Connections a server keeps to PostgreSQL (--db postgres://…; other commands keep 2); every server sharing the database keeps its own, all within PostgreSQL\'s max_connections',
    parse: integer(1, 1000),
  } satisfies Option<number>,
  'body-limit': {
    env: 'CACHEBREAK_BODY_LIMIT',
    default: 16 * 1024 ** 2,
    shownDefault: '16MiB',
    valueName: 'SIZE',
    help: 'Largest request body, before and after gzip decompression',
    parse: bytes,
  } satisfies Option<number>,
  'query-body-limit': {
    env: 'CACHEBREAK_QUERY_BODY_LIMIT',
    default: DEFAULT_QUERY_BODY_LIMIT,
    shownDefault: '64KiB',
    valueName: 'SIZE',
    help: 'Largest body of a read request (Grafana simPod queries), before and after gzip decompression; larger: 413',
    parse: bytes,
  } satisfies Option<number>,
  'inflight-limit': {
    env: 'CACHEBREAK_INFLIGHT_LIMIT',
    default: undefined as number | undefined,
    shownDefault: '4 × --body-limit',
    valueName: 'SIZE',
    help: 'Request bodies ingest holds at once (as read, and decompressed), at least twice --body-limit; past it: 503 with Retry-After. One client (API key, or address) holds at most half of it (or twice --body-limit, if more); past its share: 429. The proxy\'s copies of the calls it observes count in it too; past it, a call is forwarded and not observed',
    parse: bytes,
  } satisfies Option<number | undefined>,
  'body-timeout': {
    env: 'CACHEBREAK_BODY_TIMEOUT',
    default: DEFAULT_BODY_TIMEOUT_MS,
    shownDefault: '30s',
    valueName: 'DURATION',
    help: 'How long an ingest body (HTTP or gRPC) or a proxied request body may go without a byte arriving; past it: 408 (gRPC: DEADLINE_EXCEEDED), and what it held of --inflight-limit is freed',
    parse: (raw, name) => duration(raw, name)!,
  } satisfies Option<number>,
  'max-connections': {
    env: 'CACHEBREAK_MAX_CONNECTIONS',
    default: DEFAULT_MAX_CONNECTIONS,
    valueName: 'N',
    help: 'Connections each port (HTTP, gRPC, proxy) keeps open at once; more are closed as they arrive',
    parse: integer(1, 1_000_000),
  } satisfies Option<number>,
  'headers-timeout': {
    env: 'CACHEBREAK_HEADERS_TIMEOUT',
    default: DEFAULT_HEADERS_TIMEOUT_MS,
    shownDefault: '10s',
    valueName: 'DURATION',
    help: `How long an HTTP connection may take to send a request's headers, an idle new connection included; past it: closed (at most ${REQUEST_TIMEOUT_MS / 1000}s)`,
    parse: (raw, name) => {
      const ms = duration(raw, name)!;
      if (ms > REQUEST_TIMEOUT_MS) throw new ConfigError(`${name}: at most ${REQUEST_TIMEOUT_MS / 1000}s (the whole request's timeout), got "${raw}"`);
      return ms;
    },
  } satisfies Option<number>,
  'min-miss-tokens': {
    env: 'CACHEBREAK_MIN_MISS_TOKENS',
    default: DEFAULT_DETECTION.minMissTokens,
    valueName: 'N',
    help: 'A break must lose at least this many cache-read tokens',
    parse: integer(0, Number.MAX_SAFE_INTEGER),
  } satisfies Option<number>,
  'miss-ratio': {
    env: 'CACHEBREAK_MISS_RATIO',
    default: DEFAULT_DETECTION.missRatio,
    valueName: 'R',
    help: '…and read less than this share of what the previous turn left cached',
    parse: ratio,
  } satisfies Option<number>,
  'min-cacheable': {
    env: 'CACHEBREAK_MIN_CACHEABLE',
    default: DEFAULT_DETECTION.minCacheable,
    shownDefault: 'built-in, per provider',
    valueName: 'MINIMUMS',
    help: `Shortest prompt, in tokens, that an automatic cache keeps, as provider=N or provider/model=N pairs such as openai=1024,deepseek=64,gemini/gemini-3-pro*=4096 (a model ending in * covers every model it starts; the most specific model wins, then the provider); providers: ${MIN_CACHEABLE_KEYS.join(', ')} (any provider not listed)`,
    parse: minCacheable,
  } satisfies Option<Readonly<Record<string, number>>>,
  prices: {
    env: 'CACHEBREAK_PRICES',
    default: Object.freeze({}) as PriceOverrides,
    shownDefault: 'genai-prices database',
    valueName: 'FILE',
    help: 'JSON file of model id or id prefix → {input, cacheRead, cacheWrite, cacheWrite1h} in USD per million tokens (or the older {inputUsdPerMTok, readMultiplier, write5mMultiplier, write1hMultiplier}), over the genai-prices database',
    parse: prices,
  } satisfies Option<PriceOverrides>,
  synchronous: {
    env: 'CACHEBREAK_SYNCHRONOUS',
    default: 'normal' as 'normal' | 'full',
    valueName: 'MODE',
    help: '"normal": an acknowledged event survives a killed process; "full": also a power loss (slower)',
    parse: oneOf('normal', 'full'),
  } satisfies Option<'normal' | 'full'>,
  project: {
    env: 'CACHEBREAK_PROJECT',
    default: 'default',
    valueName: 'NAME',
    help: 'Project that data is stored under and read from',
    parse: text,
  } satisfies Option<string>,
  server: {
    env: 'CACHEBREAK_SERVER',
    default: '',
    shownDefault: 'none',
    valueName: 'URL',
    help: 'Send to a running cachebreak server instead of writing the database',
    parse: (raw, name) => {
      let url: URL;
      try {
        url = new URL(raw);
      } catch {
        throw new ConfigError(`${name}: expected a URL such as http://127.0.0.1:4318, got "${withoutUserinfo(raw)}"`);
      }
      // It would be printed in every message about the server, and be visible in the process list.
      if (url.username !== '' || url.password !== '') {
        throw new ConfigError(`${name}: the URL carries credentials (user:password@), which are neither sent nor shown; give the URL without them and the API key in CACHEBREAK_KEY (or --key)`);
      }
      return url.toString().replace(/\/$/, '');
    },
  } satisfies Option<string>,
  key: {
    env: 'CACHEBREAK_KEY',
    default: '',
    shownDefault: 'none',
    valueName: 'KEY',
    help: 'API key sent to --server (Authorization: Bearer), with scope ingest; prefer the variable: a flag is visible to other users in the process list',
    parse: text,
  } satisfies Option<string>,
  json: {
    env: 'CACHEBREAK_JSON',
    default: false,
    valueName: '',
    help: 'Print JSON for machines instead of text',
    parse: flag,
  } satisfies Option<boolean>,
  from: {
    env: 'CACHEBREAK_FROM',
    default: undefined as number | undefined,
    shownDefault: 'open',
    valueName: 'TIME',
    help: 'Start of the time range, inclusive (RFC 3339 or epoch milliseconds)',
    parse: time,
  } satisfies Option<number | undefined>,
  to: {
    env: 'CACHEBREAK_TO',
    default: undefined as number | undefined,
    shownDefault: 'open',
    valueName: 'TIME',
    help: 'End of the time range, exclusive (RFC 3339 or epoch milliseconds)',
    parse: time,
  } satisfies Option<number | undefined>,
  batch: {
    env: 'CACHEBREAK_BATCH',
    default: 1000,
    valueName: 'N',
    help: 'Events per request to a server, or per database transaction',
    parse: integer(1, 100_000),
  } satisfies Option<number>,
  seed: {
    env: 'CACHEBREAK_SEED',
    default: 1,
    valueName: 'N',
    help: 'Seed of the demo workload: the same seed writes the same sessions',
    parse: integer(0, 2 ** 32 - 1),
  } satisfies Option<number>,
  retain: {
    env: 'CACHEBREAK_RETAIN',
    default: undefined as number | undefined,
    shownDefault: 'forever',
    valueName: 'DURATION',
    help: 'Delete raw turns older than this (e.g. 30d); dashboards keep their rollups',
    parse: duration,
  } satisfies Option<number | undefined>,
  'retain-rollups': {
    env: 'CACHEBREAK_RETAIN_ROLLUPS',
    default: undefined as number | undefined,
    shownDefault: 'forever',
    valueName: 'DURATION',
    help: 'Delete rollups (dashboard history) and emptied sessions older than this; at least --retain',
    parse: duration,
  } satisfies Option<number | undefined>,
  'insecure-no-auth': {
    env: 'CACHEBREAK_INSECURE_NO_AUTH',
    default: false,
    valueName: '',
    help: 'Serve without API keys anyway: on an address other than loopback, through a proxy (which must then authenticate), and after every key was revoked (anyone who can connect reads and writes)',
    parse: flag,
  } satisfies Option<boolean>,
  'public-url': {
    env: 'CACHEBREAK_PUBLIC_URL',
    default: [] as string[],
    shownDefault: 'none',
    valueName: 'URLS',
    help: 'URLs or host names clients reach the server by, comma-separated (e.g. https://cachebreak.example.com); with no API key, a request whose Host header names anything but these, localhost or an IP address is refused (403: DNS rebinding)',
    parse: (raw, name) => {
      const items = raw.split(',').filter((item) => item.trim() !== '');
      if (items.length === 0) throw new ConfigError(`${name}: expected URLs or host names separated by commas, such as https://cachebreak.example.com`);
      return items.map((item) => {
        const host = publicHostOf(item);
        if (host === undefined) throw new ConfigError(`${name}: expected URLs or host names separated by commas, such as https://cachebreak.example.com, got "${item.trim().slice(0, 100)}"`);
        return host;
      });
    },
  } satisfies Option<string[]>,
  'rate-limit': {
    env: 'CACHEBREAK_RATE_LIMIT',
    default: 100,
    valueName: 'N',
    help: 'Requests per second each API key may make (bursts of twice that); over it: 429 with Retry-After',
    parse: integer(1, 1_000_000),
  } satisfies Option<number>,
  'queue-limit': {
    env: 'CACHEBREAK_QUEUE_LIMIT',
    default: DEFAULT_QUEUE_LIMIT,
    valueName: 'N',
    help: 'Events waiting to be written, past which ingest answers 429 with Retry-After instead of queueing more',
    parse: integer(1_000, 100_000_000),
  } satisfies Option<number>,
  scope: {
    env: 'CACHEBREAK_SCOPE',
    default: 'read',
    valueName: 'SCOPES',
    help: 'Scopes of a new API key, comma-separated: ingest, read, admin',
    parse: text,
  } satisfies Option<string>,
  name: {
    env: 'CACHEBREAK_KEY_NAME',
    default: '',
    shownDefault: 'none',
    valueName: 'TEXT',
    help: 'A name for a new API key, to recognise it in keys list',
    parse: text,
  } satisfies Option<string>,
  'grpc-port': {
    env: 'CACHEBREAK_GRPC_PORT',
    default: 4317 as number | 'off',
    valueName: 'PORT',
    help: 'OTLP/gRPC port (4317, the OTLP default, where exporters send unless told otherwise); 0 picks a free one, "off" serves no gRPC. A port already taken (e.g. by a local OpenTelemetry Collector) is a warning: the server serves OTLP over HTTP only',
    parse: (raw, name) => (raw.trim().toLowerCase() === 'off' ? 'off' : integer(0, 65535)(raw, name)),
  } satisfies Option<number | 'off'>,
  'otlp-export-endpoint': {
    env: 'CACHEBREAK_OTLP_EXPORT_ENDPOINT',
    default: '',
    shownDefault: 'OTEL_EXPORTER_OTLP_LOGS_ENDPOINT, else OTEL_EXPORTER_OTLP_ENDPOINT, else none',
    valueName: 'URL',
    help: 'Export every break as an OTel log record (event prompt_cache_break) to this OTLP endpoint (/v1/logs is added for HTTP); protocol and headers from OTEL_EXPORTER_OTLP_[LOGS_]PROTOCOL and _HEADERS',
    parse: endpoint,
  } satisfies Option<string>,
  'alert-cache-rate-below': {
    env: 'CACHEBREAK_ALERT_CACHE_RATE_BELOW',
    default: undefined as number | undefined,
    shownDefault: 'off',
    valueName: 'RATIO',
    help: 'Alert when a project\'s cache rate over --alert-window falls below this (e.g. 0.5), once it has --alert-min-turns turns in the window (docs/alerts.md)',
    parse: ratio,
  } satisfies Option<number | undefined>,
  'alert-extra-cost-above': {
    env: 'CACHEBREAK_ALERT_EXTRA_COST_ABOVE',
    default: undefined as number | undefined,
    shownDefault: 'off',
    valueName: 'USD',
    help: 'Alert when a project\'s breaks cost more than this many USD per hour (estimated extra cost, averaged over --alert-window)',
    parse: usd,
  } satisfies Option<number | undefined>,
  'alert-new-reason': {
    env: 'CACHEBREAK_ALERT_NEW_REASON',
    default: false,
    valueName: '',
    help: 'Alert when breaks of a reason (and cause) appear in --alert-window that the project had not had before (in the 30 days before the server\'s first window, or since)',
    parse: flag,
  } satisfies Option<boolean>,
  'alert-window': {
    env: 'CACHEBREAK_ALERT_WINDOW',
    default: 3_600_000,
    shownDefault: '1h',
    valueName: 'DURATION',
    help: 'What each alert rule looks at: the last DURATION, in whole minutes (the rollups\' step)',
    parse: (raw, name) => {
      const ms = duration(raw, name)!;
      if (ms % 60_000 !== 0) throw new ConfigError(`${name}: expected whole minutes, such as 15m or 1h, got "${raw}"`);
      return ms;
    },
  } satisfies Option<number>,
  'alert-min-turns': {
    env: 'CACHEBREAK_ALERT_MIN_TURNS',
    default: 20,
    valueName: 'N',
    help: 'Turns a project needs in --alert-window before --alert-cache-rate-below judges its rate',
    parse: integer(1, 1_000_000),
  } satisfies Option<number>,
  'alert-every': {
    env: 'CACHEBREAK_ALERT_EVERY',
    default: 60_000,
    shownDefault: '1m',
    valueName: 'DURATION',
    help: 'How often the server evaluates the alert rules of every project (1s to 1d)',
    parse: (raw, name) => {
      const ms = duration(raw, name)!;
      if (ms < 1000 || ms > 86_400_000) throw new ConfigError(`${name}: expected 1s to 1d, got "${raw}"`);
      return ms;
    },
  } satisfies Option<number>,
  'alert-webhook': {
    env: 'CACHEBREAK_ALERT_WEBHOOK',
    default: '',
    shownDefault: 'none',
    valueName: 'URL',
    help: 'POST each alert as JSON to this URL when it fires and when it resolves ({status, alert}); 5 s per attempt, 3 attempts',
    parse: endpoint,
  } satisfies Option<string>,
  'trace-link': {
    env: 'CACHEBREAK_TRACE_LINK',
    default: '',
    shownDefault: 'none',
    valueName: 'TEMPLATE',
    help: 'Link each break page to its trace in your tracer: a URL with {traceId}, {spanId} or {sessionId}, e.g. https://cloud.langfuse.com/project/<id>/traces/{traceId} or http://jaeger:16686/trace/{traceId} (docs/ui.md)',
    parse: (raw, name) => {
      const template = raw.trim();
      const problem = traceLinkProblem(template);
      if (problem !== undefined) throw new ConfigError(`${name}: ${problem}`);
      return template;
    },
  } satisfies Option<string>,
  format: {
    env: 'CACHEBREAK_FORMAT',
    default: 'auto' as 'auto' | TailFormat,
    valueName: 'FORMAT',
    help: 'Format of followed files: auto (told from each file\'s start), ndjson, otel-file, claude-debug, qwen-debug or qwen-openai',
    parse: oneOf('auto', ...TAIL_FORMATS),
  } satisfies Option<'auto' | TailFormat>,
  'from-start': {
    env: 'CACHEBREAK_FROM_START',
    default: false,
    valueName: '',
    help: 'Read files that exist at start and were never followed from their beginning (default: only what is appended from now on)',
    parse: flag,
  } satisfies Option<boolean>,
  'follow-symlinks': {
    env: 'CACHEBREAK_FOLLOW_SYMLINKS',
    default: false,
    valueName: '',
    help: 'Follow links that lead outside the directories of the paths and globs followed (default: skip them with a notice; FIFOs and devices are always skipped)',
    parse: flag,
  } satisfies Option<boolean>,
  print: {
    env: 'CACHEBREAK_PRINT',
    default: false,
    valueName: '',
    help: 'Write every detected break to stdout as one logfmt line, as on the server log, and harness-reported breaks as event=harness_prompt_cache_break',
    parse: flag,
  } satisfies Option<boolean>,
  tail: {
    env: 'CACHEBREAK_TAIL',
    default: [] as string[],
    shownDefault: 'none',
    valueName: 'PATH|GLOB',
    help: `Also follow these files in the server, as cachebreak tail does (repeat the flag, or separate with "${delimiter}")`,
    parse: (raw, name) => {
      const patterns = raw.split(delimiter).map((p) => p.trim()).filter((p) => p !== '');
      if (patterns.length === 0) throw new ConfigError(`${name}: expected a path or glob such as ~/.claude/debug/*.txt`);
      return patterns;
    },
  } satisfies Option<string[]>,
  'max-events': {
    env: 'CACHEBREAK_MAX_EVENTS',
    default: DEFAULT_LIMITS.maxEvents,
    valueName: 'N',
    help: 'Events (or OTLP records) one request may carry; more is 413',
    parse: integer(1, 10_000_000),
  } satisfies Option<number>,
  'max-string': {
    env: 'CACHEBREAK_MAX_STRING',
    default: DEFAULT_LIMITS.maxString,
    valueName: 'N',
    help: 'Characters of an id, name, hash or model in an event; longer is rejected (400 in the partial success)',
    parse: integer(16, 65_536),
  } satisfies Option<number>,
  'max-tools': {
    env: 'CACHEBREAK_MAX_TOOLS',
    default: DEFAULT_LIMITS.maxTools,
    valueName: 'N',
    help: 'Tools in one snapshot; more is rejected',
    parse: integer(1, 100_000),
  } satisfies Option<number>,
  'max-attributes': {
    env: 'CACHEBREAK_MAX_ATTRIBUTES',
    default: DEFAULT_LIMITS.maxAttributes,
    valueName: 'N',
    help: 'Attributes of one OTLP log record, span or data point; more is rejected (partial success)',
    parse: integer(1, 100_000),
  } satisfies Option<number>,
  'max-waiting-bytes': {
    env: 'CACHEBREAK_MAX_WAITING_BYTES',
    default: DEFAULT_WAITING_BYTES,
    shownDefault: '32MiB',
    valueName: 'SIZE',
    help: 'Bytes (estimated as held in memory) that the OTLP records of one project waiting for their other half may hold, such as Claude Code request bodies (as hashes) waiting for their response: in the database, so that any node may pair them (Claude Code bodies; the api_request and api_response records of Gemini CLI and Qwen Code, their spans and the calls their logs describe; with PostgreSQL every node keeps to the bound it was given), and in memory for the files `tail` follows; past it the oldest are dropped and counted in cachebreak_waiting_evicted_total',
    parse: bytes,
  } satisfies Option<number>,
  'max-metric-models': {
    env: 'CACHEBREAK_MAX_METRIC_MODELS',
    default: DEFAULT_METRIC_MODELS,
    valueName: 'N',
    help: 'Models (model and provider pairs) per project with series of their own in /metrics: the most used, by turns; the others are counted as model="other", provider="other"',
    parse: integer(1, 10_000),
  } satisfies Option<number>,
  'max-json': {
    env: 'CACHEBREAK_MAX_JSON',
    default: DEFAULT_LIMITS.maxJson,
    valueName: 'N',
    help: 'Characters of JSON of one free-form field an event stores (diagnostics, params, thinking, toolChoice); more is rejected',
    parse: integer(256, 16_777_216),
  } satisfies Option<number>,
  'read-workers': {
    env: 'CACHEBREAK_READ_WORKERS',
    default: 1,
    valueName: 'N',
    help: 'Threads that answer reads (dashboards, REST) from a SQLite file while the main thread writes; 0 reads on the main thread (as a PostgreSQL store always does)',
    parse: integer(0, 64),
  } satisfies Option<number>,
  'proxy-port': {
    env: 'CACHEBREAK_PROXY_PORT',
    default: 4319,
    valueName: 'PORT',
    help: 'Port of the provider proxy (cachebreak proxy), on --host; 0 picks a free one',
    parse: integer(0, 65535),
  } satisfies Option<number>,
  'anthropic-upstream': {
    env: 'CACHEBREAK_ANTHROPIC_UPSTREAM',
    default: 'https://api.anthropic.com',
    valueName: 'URL',
    help: 'Where the proxy forwards /anthropic/… requests (the Anthropic Messages API or a gateway speaking it)',
    parse: upstream,
  } satisfies Option<string>,
  'openai-upstream': {
    env: 'CACHEBREAK_OPENAI_UPSTREAM',
    default: 'https://api.openai.com',
    valueName: 'URL',
    help: 'Where the proxy forwards /openai/… requests (OpenAI Chat Completions and Responses, or a compatible API)',
    parse: upstream,
  } satisfies Option<string>,
  'provider-diagnostics': {
    env: 'CACHEBREAK_PROVIDER_DIAGNOSTICS',
    default: false,
    valueName: '',
    help: "Opt in: the proxy adds Anthropic's cache-diagnosis-2026-04-07 beta to the anthropic-beta header of each /anthropic/ request (merged with the client's betas, never twice), so that Anthropic says why a cache missed; off, requests go unchanged",
    parse: flag,
  } satisfies Option<boolean>,
  'gemini-upstream': {
    env: 'CACHEBREAK_GEMINI_UPSTREAM',
    default: 'https://generativelanguage.googleapis.com',
    valueName: 'URL',
    help: 'Where the proxy forwards /gemini/… requests (the Gemini API)',
    parse: upstream,
  } satisfies Option<string>,
} as const;

export type OptionName = keyof typeof OPTIONS;
export type OptionValues<N extends OptionName> = { [K in N]: (typeof OPTIONS)[K]['default'] };

/** Flags that take no value. */
const SWITCHES = new Set<OptionName>(['json', 'insecure-no-auth', 'from-start', 'follow-symlinks', 'print', 'alert-new-reason', 'provider-diagnostics']);

/** Flags that may be given more than once; their values are joined as a path list. */
const REPEATABLE = new Set<OptionName>(['tail']);

export interface Parsed<N extends OptionName> {
  values: OptionValues<N>;
  positionals: string[];
  help: boolean;
}

/**
 * Reads the named options from argv (`--name value` or `--name=value`), then
 * the environment, then the default. Unknown flags are errors.
 */
export function parseOptions<N extends OptionName>(
  names: readonly N[],
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): Parsed<N> {
  const raw = new Map<string, string>();
  const positionals: string[] = [];
  let help = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--help' || arg === '-h') {
      help = true;
      continue;
    }
    if (!arg.startsWith('--')) {
      positionals.push(arg);
      continue;
    }
    const [flag, inline] = arg.slice(2).split(/=(.*)/s, 2) as [string, string | undefined];
    if (!(names as readonly string[]).includes(flag)) {
      throw new ConfigError(`unknown option --${flag}; see --help`);
    }
    if (SWITCHES.has(flag as OptionName)) {
      raw.set(flag, inline ?? '');
      continue;
    }
    const value = inline ?? argv[++i];
    if (value === undefined) throw new ConfigError(`--${flag}: needs a value (${OPTIONS[flag as N].valueName})`);
    raw.set(flag, REPEATABLE.has(flag as OptionName) && raw.has(flag) ? `${raw.get(flag)}${delimiter}${value}` : value);
  }
  const values = {} as Record<string, unknown>;
  for (const name of names) {
    const option: Option<unknown> = OPTIONS[name];
    const fromFlag = raw.get(name);
    const fromEnv = env[option.env];
    if (fromFlag !== undefined) values[name] = option.parse(fromFlag, `--${name}`);
    else if (fromEnv !== undefined && fromEnv !== '') values[name] = option.parse(fromEnv, option.env);
    else values[name] = option.default;
  }
  return { values: values as OptionValues<N>, positionals, help };
}

export function limitsOf(values: OptionValues<'max-events' | 'max-string' | 'max-tools' | 'max-attributes' | 'max-json'>): Limits {
  return {
    maxEvents: values['max-events'],
    maxString: values['max-string'],
    maxTools: values['max-tools'],
    maxAttributes: values['max-attributes'],
    maxJson: values['max-json'],
  };
}

export function detectionOf(values: OptionValues<'min-miss-tokens' | 'miss-ratio' | 'min-cacheable' | 'prices'>): DetectionOptions {
  return {
    minMissTokens: values['min-miss-tokens'],
    missRatio: values['miss-ratio'],
    minCacheable: values['min-cacheable'],
    prices: priceLookup(values.prices),
  };
}

export type OtlpProtocol = 'grpc' | 'http/protobuf' | 'http/json';

/** Where one OTel signal is exported. */
export interface OtlpTarget {
  url: string;
  protocol: OtlpProtocol;
  headers: Record<string, string>;
}

/** cachebreak's own OpenTelemetry, from --otlp-export-endpoint and the standard OTEL_* variables. */
export interface OtelSettings {
  serviceName: string;
  /** Where breaks go as log records; undefined: not exported. */
  breaks: OtlpTarget | undefined;
  /** Where spans of cachebreak's own HTTP handling go; undefined: not traced (the default). */
  traces: OtlpTarget | undefined;
}

type Env = Readonly<Record<string, string | undefined>>;
type Signal = 'LOGS' | 'TRACES';

function envValue(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value ? value : undefined;
}

/** The signal's own variable when set, else the generic one. */
function signalVariable(env: Env, signal: Signal, suffix: string): string {
  const own = `OTEL_EXPORTER_OTLP_${signal}_${suffix}`;
  return envValue(env, own) !== undefined ? own : `OTEL_EXPORTER_OTLP_${suffix}`;
}

/** W3C-baggage-style "key=value,key2=value2", values percent-encoded. */
function headersOf(env: Env, signal: Signal): Record<string, string> {
  const name = signalVariable(env, signal, 'HEADERS');
  const headers: Record<string, string> = {};
  for (const pair of (envValue(env, name) ?? '').split(',')) {
    if (pair.trim() === '') continue;
    const at = pair.indexOf('=');
    if (at <= 0) throw new ConfigError(`${name}: expected key=value pairs separated by commas`);
    try {
      headers[decodeURIComponent(pair.slice(0, at).trim()).toLowerCase()] = decodeURIComponent(pair.slice(at + 1).trim());
    } catch {
      throw new ConfigError(`${name}: "${pair.slice(0, at).trim()}" has a value that is not valid percent-encoding`);
    }
  }
  return headers;
}

/**
 * The OTel rules for an endpoint: a signal endpoint (OTEL_EXPORTER_OTLP_LOGS_ENDPOINT)
 * is used as given; a base endpoint (OTEL_EXPORTER_OTLP_ENDPOINT, and
 * --otlp-export-endpoint) gets /v1/logs or /v1/traces added over HTTP.
 */
function targetOf(env: Env, signal: Signal, base: string | undefined): OtlpTarget | undefined {
  const protocolName = signalVariable(env, signal, 'PROTOCOL');
  const protocol = oneOf<OtlpProtocol>('grpc', 'http/protobuf', 'http/json')(envValue(env, protocolName) ?? 'http/protobuf', protocolName);
  const path = `/v1/${signal.toLowerCase()}`;
  const withPath = (url: string) => (protocol === 'grpc' || url.endsWith(path) ? url : url.replace(/\/?$/, path));
  const own = `OTEL_EXPORTER_OTLP_${signal}_ENDPOINT`;
  let url: string;
  if (base !== undefined) url = withPath(base);
  else if (envValue(env, own) !== undefined) url = endpoint(env[own]!, own);
  else if (envValue(env, 'OTEL_EXPORTER_OTLP_ENDPOINT') !== undefined) url = withPath(endpoint(env.OTEL_EXPORTER_OTLP_ENDPOINT!, 'OTEL_EXPORTER_OTLP_ENDPOINT'));
  else return undefined;
  return { url, protocol, headers: headersOf(env, signal) };
}

function exporterChoice(env: Env, name: string, fallback: string): string {
  const value = envValue(env, name) ?? fallback;
  if (value !== 'otlp' && value !== 'none') throw new ConfigError(`${name}: cachebreak exports only with otlp (or none), got "${value}"`);
  return value;
}

export function otelOf(exportEndpoint: string, env: Env): OtelSettings {
  const serviceName = envValue(env, 'OTEL_SERVICE_NAME') ?? 'cachebreak';
  const disabled = envValue(env, 'OTEL_SDK_DISABLED');
  if (disabled !== undefined && flag(disabled.toLowerCase(), 'OTEL_SDK_DISABLED')) return { serviceName, breaks: undefined, traces: undefined };
  // The flag always exports; the environment only when OTEL_LOGS_EXPORTER allows it.
  const breaks =
    exportEndpoint !== '' ? targetOf(env, 'LOGS', exportEndpoint) : exporterChoice(env, 'OTEL_LOGS_EXPORTER', 'otlp') === 'otlp' ? targetOf(env, 'LOGS', undefined) : undefined;
  // Self-tracing is off unless asked for; asked for with no endpoint, it uses the OTel default.
  const traced = exporterChoice(env, 'OTEL_TRACES_EXPORTER', 'none') === 'otlp';
  const fallback = envValue(env, signalVariable(env, 'TRACES', 'PROTOCOL')) === 'grpc' ? 'http://localhost:4317' : 'http://localhost:4318/';
  const traces = traced ? (targetOf(env, 'TRACES', undefined) ?? targetOf(env, 'TRACES', fallback)) : undefined;
  return { serviceName, breaks, traces };
}

function shown(option: Option<unknown>): string {
  return option.shownDefault ?? String(option.default);
}

/** The options part of a command's --help. */
export function optionsHelp(names: readonly OptionName[]): string {
  const rows = names.map((name) => {
    const option: Option<unknown> = OPTIONS[name];
    const flag = option.valueName ? `--${name} ${option.valueName}` : `--${name}`;
    return [flag, `${option.help} [${option.env}; default ${shown(option)}]`];
  });
  rows.push(['--help', 'Show this help']);
  const width = Math.max(...rows.map(([flag]) => flag!.length));
  return rows.map(([flag, text]) => `  ${flag!.padEnd(width)}  ${text}`).join('\n');
}

/** docs/configuration.md's table, as Markdown rows. */
export function optionsTable(): string {
  const header = '| flag | environment | default | what it does |\n| --- | --- | --- | --- |';
  const rows = (Object.keys(OPTIONS) as OptionName[]).map((name) => {
    const option: Option<unknown> = OPTIONS[name];
    return `| \`--${name}\` | \`${option.env}\` | ${shown(option)} | ${option.help} |`;
  });
  return [header, ...rows].join('\n');
}
