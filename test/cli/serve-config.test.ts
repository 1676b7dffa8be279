// `serve`'s configuration as main() reads it (parseOptions over serve's own
// option list): the defaults of issue 3, every CACHEBREAK_* variable setting
// its option, and a flag winning over the variable. Nothing here binds a
// port but the last test, which proves the default body limit reaches a real
// server on an ephemeral one.
import { writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { serveCommand } from '../../src/cli/serve.js';
import { OPTIONS, parseOptions } from '../../src/config.js';
import { startServer } from '../e2e/server.js';
import { rawRequest } from '../e2e/process.js';
import { tempDir } from '../helpers.js';
import { cli } from './run.js';

type ServeOption = (typeof serveCommand.options)[number];
const parse = (argv: string[], env: Record<string, string> = {}) => parseOptions(serveCommand.options, argv, env).values;

const MIB = 1024 ** 2;
const DAY = 86_400_000;

interface Row {
  option: ServeOption;
  /** Spelled out, not read from OPTIONS: the variable's name is part of the contract. */
  env: string;
  envValue: string;
  fromEnv: unknown;
  flag: string[];
  fromFlag: unknown;
}

/** One row per serve option but --prices (files; its own test below): a variable value and a flag that differ from it and from the default. */
const ROWS: Row[] = [
  { option: 'host', env: 'CACHEBREAK_HOST', envValue: '0.0.0.0', fromEnv: '0.0.0.0', flag: ['--host', '::1'], fromFlag: '::1' },
  { option: 'port', env: 'CACHEBREAK_PORT', envValue: '9000', fromEnv: 9000, flag: ['--port', '0'], fromFlag: 0 },
  { option: 'db', env: 'CACHEBREAK_DB', envValue: '/data/env.db', fromEnv: '/data/env.db', flag: ['--db=flag.db'], fromFlag: 'flag.db' },
  { option: 'body-limit', env: 'CACHEBREAK_BODY_LIMIT', envValue: '1MiB', fromEnv: MIB, flag: ['--body-limit', '512KB'], fromFlag: 512_000 },
  { option: 'query-body-limit', env: 'CACHEBREAK_QUERY_BODY_LIMIT', envValue: '1MiB', fromEnv: MIB, flag: ['--query-body-limit', '8KB'], fromFlag: 8_000 },
  { option: 'inflight-limit', env: 'CACHEBREAK_INFLIGHT_LIMIT', envValue: '256MiB', fromEnv: 256 * MIB, flag: ['--inflight-limit', '40MB'], fromFlag: 40_000_000 },
  { option: 'body-timeout', env: 'CACHEBREAK_BODY_TIMEOUT', envValue: '10s', fromEnv: 10_000, flag: ['--body-timeout', '2m'], fromFlag: 120_000 },
  { option: 'max-connections', env: 'CACHEBREAK_MAX_CONNECTIONS', envValue: '200', fromEnv: 200, flag: ['--max-connections', '300'], fromFlag: 300 },
  { option: 'headers-timeout', env: 'CACHEBREAK_HEADERS_TIMEOUT', envValue: '5s', fromEnv: 5_000, flag: ['--headers-timeout', '1m'], fromFlag: 60_000 },
  { option: 'min-miss-tokens', env: 'CACHEBREAK_MIN_MISS_TOKENS', envValue: '500', fromEnv: 500, flag: ['--min-miss-tokens', '0'], fromFlag: 0 },
  { option: 'miss-ratio', env: 'CACHEBREAK_MISS_RATIO', envValue: '0.5', fromEnv: 0.5, flag: ['--miss-ratio', '1'], fromFlag: 1 },
  {
    option: 'min-cacheable',
    env: 'CACHEBREAK_MIN_CACHEABLE',
    envValue: 'openai=2048,deepseek=32',
    fromEnv: { openai: 2048, deepseek: 32 },
    flag: ['--min-cacheable', 'other=512'],
    fromFlag: { other: 512 },
  },
  { option: 'synchronous', env: 'CACHEBREAK_SYNCHRONOUS', envValue: 'full', fromEnv: 'full', flag: ['--synchronous', 'normal'], fromFlag: 'normal' },
  { option: 'project', env: 'CACHEBREAK_PROJECT', envValue: 'team-a', fromEnv: 'team-a', flag: ['--project', 'team-b'], fromFlag: 'team-b' },
  { option: 'retain', env: 'CACHEBREAK_RETAIN', envValue: '30d', fromEnv: 30 * DAY, flag: ['--retain', '12h'], fromFlag: DAY / 2 },
  { option: 'retain-rollups', env: 'CACHEBREAK_RETAIN_ROLLUPS', envValue: '90d', fromEnv: 90 * DAY, flag: ['--retain-rollups', '1d'], fromFlag: DAY },
  { option: 'insecure-no-auth', env: 'CACHEBREAK_INSECURE_NO_AUTH', envValue: 'true', fromEnv: true, flag: ['--insecure-no-auth=false'], fromFlag: false },
  {
    option: 'public-url',
    env: 'CACHEBREAK_PUBLIC_URL',
    envValue: 'https://cachebreak.example.com,grafana.internal:4318',
    fromEnv: ['cachebreak.example.com', 'grafana.internal'],
    flag: ['--public-url', 'http://[::1]:8080/'],
    fromFlag: ['::1'],
  },
  { option: 'rate-limit', env: 'CACHEBREAK_RATE_LIMIT', envValue: '5', fromEnv: 5, flag: ['--rate-limit', '7'], fromFlag: 7 },
  { option: 'queue-limit', env: 'CACHEBREAK_QUEUE_LIMIT', envValue: '5000', fromEnv: 5000, flag: ['--queue-limit', '2000'], fromFlag: 2000 },
  { option: 'grpc-port', env: 'CACHEBREAK_GRPC_PORT', envValue: 'off', fromEnv: 'off', flag: ['--grpc-port', '4999'], fromFlag: 4999 },
  {
    option: 'otlp-export-endpoint',
    env: 'CACHEBREAK_OTLP_EXPORT_ENDPOINT',
    envValue: 'http://collector:4318',
    fromEnv: 'http://collector:4318/',
    flag: ['--otlp-export-endpoint', 'https://otel.example.com/base'],
    fromFlag: 'https://otel.example.com/base',
  },
  { option: 'tail', env: 'CACHEBREAK_TAIL', envValue: `a.txt${delimiter}logs/*.log`, fromEnv: ['a.txt', 'logs/*.log'], flag: ['--tail', 'c.txt', '--tail', 'd/*.txt'], fromFlag: ['c.txt', 'd/*.txt'] },
  { option: 'format', env: 'CACHEBREAK_FORMAT', envValue: 'claude-debug', fromEnv: 'claude-debug', flag: ['--format', 'ndjson'], fromFlag: 'ndjson' },
  { option: 'from-start', env: 'CACHEBREAK_FROM_START', envValue: '1', fromEnv: true, flag: ['--from-start=0'], fromFlag: false },
  { option: 'follow-symlinks', env: 'CACHEBREAK_FOLLOW_SYMLINKS', envValue: 'true', fromEnv: true, flag: ['--follow-symlinks=false'], fromFlag: false },
  { option: 'batch', env: 'CACHEBREAK_BATCH', envValue: '50', fromEnv: 50, flag: ['--batch', '60'], fromFlag: 60 },
  { option: 'max-events', env: 'CACHEBREAK_MAX_EVENTS', envValue: '10', fromEnv: 10, flag: ['--max-events', '20'], fromFlag: 20 },
  { option: 'max-string', env: 'CACHEBREAK_MAX_STRING', envValue: '100', fromEnv: 100, flag: ['--max-string', '200'], fromFlag: 200 },
  { option: 'max-tools', env: 'CACHEBREAK_MAX_TOOLS', envValue: '5', fromEnv: 5, flag: ['--max-tools', '6'], fromFlag: 6 },
  { option: 'max-attributes', env: 'CACHEBREAK_MAX_ATTRIBUTES', envValue: '7', fromEnv: 7, flag: ['--max-attributes', '8'], fromFlag: 8 },
  { option: 'max-json', env: 'CACHEBREAK_MAX_JSON', envValue: '1000', fromEnv: 1000, flag: ['--max-json', '2000'], fromFlag: 2000 },
  { option: 'max-waiting-bytes', env: 'CACHEBREAK_MAX_WAITING_BYTES', envValue: '8MiB', fromEnv: 8 * 1024 ** 2, flag: ['--max-waiting-bytes', '500KB'], fromFlag: 500_000 },
  { option: 'max-metric-models', env: 'CACHEBREAK_MAX_METRIC_MODELS', envValue: '9', fromEnv: 9, flag: ['--max-metric-models', '10'], fromFlag: 10 },
  { option: 'read-workers', env: 'CACHEBREAK_READ_WORKERS', envValue: '0', fromEnv: 0, flag: ['--read-workers', '3'], fromFlag: 3 },
  { option: 'pg-pool', env: 'CACHEBREAK_PG_POOL', envValue: '4', fromEnv: 4, flag: ['--pg-pool', '20'], fromFlag: 20 },
  { option: 'alert-cache-rate-below', env: 'CACHEBREAK_ALERT_CACHE_RATE_BELOW', envValue: '0.5', fromEnv: 0.5, flag: ['--alert-cache-rate-below', '0.8'], fromFlag: 0.8 },
  { option: 'alert-extra-cost-above', env: 'CACHEBREAK_ALERT_EXTRA_COST_ABOVE', envValue: '5', fromEnv: 5, flag: ['--alert-extra-cost-above', '$0.50'], fromFlag: 0.5 },
  { option: 'alert-new-reason', env: 'CACHEBREAK_ALERT_NEW_REASON', envValue: 'true', fromEnv: true, flag: ['--alert-new-reason=0'], fromFlag: false },
  { option: 'alert-window', env: 'CACHEBREAK_ALERT_WINDOW', envValue: '15m', fromEnv: 15 * 60_000, flag: ['--alert-window', '1d'], fromFlag: DAY },
  { option: 'alert-min-turns', env: 'CACHEBREAK_ALERT_MIN_TURNS', envValue: '5', fromEnv: 5, flag: ['--alert-min-turns', '100'], fromFlag: 100 },
  { option: 'alert-every', env: 'CACHEBREAK_ALERT_EVERY', envValue: '10s', fromEnv: 10_000, flag: ['--alert-every', '5m'], fromFlag: 300_000 },
  {
    option: 'alert-webhook',
    env: 'CACHEBREAK_ALERT_WEBHOOK',
    envValue: 'http://hooks.internal:9000/cachebreak',
    fromEnv: 'http://hooks.internal:9000/cachebreak',
    flag: ['--alert-webhook', 'https://hooks.example.com/x?token=1'],
    fromFlag: 'https://hooks.example.com/x?token=1',
  },
  {
    option: 'trace-link',
    env: 'CACHEBREAK_TRACE_LINK',
    envValue: 'http://jaeger:16686/trace/{traceId}',
    fromEnv: 'http://jaeger:16686/trace/{traceId}',
    flag: ['--trace-link', 'https://cloud.langfuse.com/project/p/traces/{traceId}?observation={spanId}'],
    fromFlag: 'https://cloud.langfuse.com/project/p/traces/{traceId}?observation={spanId}',
  },
];

const defaults = () => Object.fromEntries(serveCommand.options.map((option) => [option, OPTIONS[option].default]));

describe('cachebreak serve: defaults', () => {
  it('listens on 127.0.0.1:4318, writes ./cachebreak.db and takes bodies up to 16 MiB, as --help says', async () => {
    expect(parse([])).toMatchObject({ host: '127.0.0.1', port: 4318, db: './cachebreak.db', 'body-limit': 16 * MIB });
    const { stdout } = await cli(['serve', '--help']);
    expect(stdout).toMatch(/^ {2}--host ADDRESS .*\[CACHEBREAK_HOST; default 127\.0\.0\.1\]$/m);
    expect(stdout).toMatch(/^ {2}--port PORT .*\[CACHEBREAK_PORT; default 4318\]$/m);
    expect(stdout).toMatch(/^ {2}--db FILE\|URL .*\[CACHEBREAK_DB; default \.\/cachebreak\.db\]$/m);
    expect(stdout).toMatch(/^ {2}--body-limit SIZE .*\[CACHEBREAK_BODY_LIMIT; default 16MiB\]$/m);
  });

  it('ignores variables that are not its own, and empty ones', () => {
    expect(parse([], { CACHEBREAK_SERVER: 'http://x:1', CACHEBREAK_SEED: '9', CACHEBREAK_PORT: '', PORT: '80', HOST: '0.0.0.0' })).toEqual(defaults());
  });
});

describe('cachebreak serve: sizes', () => {
  it('take the units of --help only; the name of an Object.prototype member is no unit', () => {
    expect(parse(['--body-limit', '2 KiB'])).toMatchObject({ 'body-limit': 2048 });
    for (const unit of ['constructor', '__proto__', 'toString', 'x']) {
      expect(() => parse(['--body-limit', `5${unit}`])).toThrow(`--body-limit: expected a size such as 16MiB, 512KB or 1048576, got "5${unit}"`);
    }
  });
});

describe('cachebreak serve: alert rules', () => {
  it('refuses a value out of range with the option and an example', () => {
    expect(() => parse(['--alert-cache-rate-below', '50%'])).toThrow('--alert-cache-rate-below: expected a number above 0 and at most 1, got "50%"');
    expect(() => parse(['--alert-extra-cost-above', '0'])).toThrow('--alert-extra-cost-above: expected an amount of USD above 0, such as 5 or 0.50, got "0"');
    expect(() => parse(['--alert-window', '90s'])).toThrow('--alert-window: expected whole minutes, such as 15m or 1h, got "90s"');
    expect(() => parse(['--alert-every', '500ms'])).toThrow('--alert-every: expected 1s to 1d, got "500ms"');
    expect(() => parse(['--alert-every', '30d'])).toThrow('--alert-every: expected 1s to 1d, got "30d"');
    expect(() => parse(['--alert-webhook', 'ftp://hooks'])).toThrow('--alert-webhook: expected an http:// or https:// URL, got "ftp://hooks"');
    expect(() => parse([], { CACHEBREAK_ALERT_MIN_TURNS: '0' })).toThrow('CACHEBREAK_ALERT_MIN_TURNS: expected a whole number from 1 to 1000000, got "0"');
  });
});

describe('cachebreak serve: --trace-link', () => {
  it('refuses an unknown placeholder, none at all, or a URL that is not http(s), and serve exits 2 saying so', async () => {
    expect(() => parse(['--trace-link', 'https://tempo/{trace_id}'])).toThrow('--trace-link: unknown placeholder {trace_id}; use {traceId}, {spanId} or {sessionId}');
    expect(() => parse(['--trace-link', 'https://tempo/explore'])).toThrow('--trace-link: no placeholder: the link would be the same for every break; put {traceId}, {spanId} or {sessionId}');
    expect(() => parse(['--trace-link', 'ftp://tracer/{traceId}'])).toThrow('--trace-link: expected an http:// or https:// URL, got "ftp://tracer/{traceId}"');
    expect(() => parse(['--trace-link', 'jaeger/{traceId}'])).toThrow('--trace-link: expected an http(s) URL with {traceId}, {spanId} or {sessionId}');
    const run = await cli(['serve', '--port', '0', '--db', join(tempDir(), 'x.db'), '--trace-link', 'http://jaeger:16686/trace/{id}']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--trace-link: unknown placeholder {id}');
    const none = await cli(['serve', '--port', '0', '--db', join(tempDir(), 'x.db'), '--trace-link', 'http://jaeger:16686/search']);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('--trace-link: no placeholder');
    const { stdout } = await cli(['serve', '--help']);
    expect(stdout).toMatch(/^ {2}--trace-link TEMPLATE .*\{traceId\}.*\[CACHEBREAK_TRACE_LINK; default none\]$/m);
  });
});

describe('cachebreak serve: environment', () => {
  it('has a row here for every option serve declares', () => {
    expect([...ROWS.map((r) => r.option), 'prices'].sort()).toEqual([...serveCommand.options].sort());
  });

  it.each(ROWS)('$env sets --$option, and only it; the flag wins over it', ({ option, env, envValue, fromEnv, flag, fromFlag }) => {
    expect(OPTIONS[option].env).toBe(env);
    // A row whose values equal the default or each other would prove nothing.
    expect(fromEnv).not.toEqual(OPTIONS[option].default);
    expect(fromFlag).not.toEqual(fromEnv);
    expect(parse([], { [env]: envValue })).toEqual({ ...defaults(), [option]: fromEnv });
    expect(parse(flag, { [env]: envValue })).toEqual({ ...defaults(), [option]: fromFlag });
  });

  it('CACHEBREAK_PRICES names a price file read over the price database; --prices wins over it', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'env.json'), JSON.stringify({ 'env-model': { input: 7, cacheRead: 0.7 } }));
    // The older multiplier form is still read.
    writeFileSync(join(dir, 'flag.json'), JSON.stringify({ 'flag-model': { inputUsdPerMTok: 7 } }));
    const env = { CACHEBREAK_PRICES: join(dir, 'env.json') };
    expect(OPTIONS.prices.env).toBe('CACHEBREAK_PRICES');
    expect(parse([]).prices).toEqual({});
    expect(parse([], env)).toEqual({ ...defaults(), prices: { 'env-model': { input: 7, cacheRead: 0.7, cacheWrite: 7, cacheWrite1h: 7 } } });
    expect(parse(['--prices', join(dir, 'flag.json')], env)).toEqual({
      ...defaults(),
      prices: { 'flag-model': { input: 7, cacheRead: 0.7, cacheWrite: 8.75, cacheWrite1h: 14 } },
    });
  });

  // Through main(), as the executable runs it. Each case is refused before the
  // server starts. Should one not be, the keyless non-loopback host refuses
  // to serve (with another message) before anything binds a port.
  it('reaches serve through main(): a bad variable is refused by name, a flag beats it', async () => {
    const guard = { CACHEBREAK_HOST: '0.0.0.0', CACHEBREAK_DB: join(tempDir(), 'x.db') };
    const badPort = await cli(['serve'], { env: { ...guard, CACHEBREAK_PORT: '70000' } });
    expect(badPort).toEqual({ code: 2, stdout: '', stderr: 'cachebreak serve: CACHEBREAK_PORT: expected a whole number from 0 to 65535, got "70000"\n' });
    const flagWins = await cli(['serve', '--port', 'x'], { env: { ...guard, CACHEBREAK_PORT: '0' } });
    expect(flagWins.stderr).toBe('cachebreak serve: --port: expected a whole number from 0 to 65535, got "x"\n');
    // Valid values from the environment reach serve's own checks: the flag's
    // 1d of rollups (not the variable's 3d) is less than 2d of turns.
    const retain = { ...guard, CACHEBREAK_PORT: '0', CACHEBREAK_RETAIN: '2d', CACHEBREAK_RETAIN_ROLLUPS: '3d' };
    const mixed = await cli(['serve', '--retain-rollups', '1d'], { env: retain });
    expect(mixed).toEqual({ code: 2, stdout: '', stderr: 'cachebreak serve: --retain-rollups: must be at least --retain (dashboards read rollups of the turns kept)\n' });
  });
});

describe('cachebreak serve: the default body limit in a real server', () => {
  it('refuses a body that inflates to one byte over 16 MiB, naming the limit', async () => {
    // Started without --body-limit.
    const server = await startServer();
    const bomb = gzipSync(Buffer.alloc(16 * MIB + 1, ' '));
    const reply = await rawRequest(server.url, '/v1/events', { method: 'POST', headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: bomb });
    expect(reply.status).toBe(413);
    expect(reply.body).toMatchObject({ error: { code: 'payload_too_large', message: `decompressed body exceeds the limit of ${16 * MIB} bytes` } });
  });
});
