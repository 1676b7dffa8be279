// The OTLP settings read once in config.ts: --grpc-port, and break export
// and self-tracing from --otlp-export-endpoint and the standard OTEL_*
// variables, with the exact message of each bad value.
import { describe, expect, it } from 'vitest';
import { ConfigError, otelOf, parseOptions } from '../../src/config.js';

const grpcPort = (argv: string[], env: Record<string, string> = {}) => parseOptions(['grpc-port'], argv, env).values['grpc-port'];

describe('OTLP configuration', () => {
  it('--grpc-port takes a port, 0 or off', () => {
    expect(grpcPort([])).toBe(4317);
    expect(grpcPort(['--grpc-port', '0'])).toBe(0);
    expect(grpcPort(['--grpc-port=off'])).toBe('off');
    expect(grpcPort([], { CACHEBREAK_GRPC_PORT: 'OFF' })).toBe('off');
    expect(() => grpcPort(['--grpc-port', '70000'])).toThrow(new ConfigError('--grpc-port: expected a whole number from 0 to 65535, got "70000"'));
  });

  it('exports breaks only when an endpoint is given, adding /v1/logs to a base endpoint over HTTP', () => {
    expect(otelOf('', {})).toEqual({ serviceName: 'cachebreak', breaks: undefined, traces: undefined });
    expect(otelOf('http://collector:4318', {}).breaks).toEqual({ url: 'http://collector:4318/v1/logs', protocol: 'http/protobuf', headers: {} });
    expect(otelOf('http://collector:4318/v1/logs', {}).breaks?.url).toBe('http://collector:4318/v1/logs');
    expect(otelOf('', { OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otlp.example:4318/base/' }).breaks?.url).toBe('https://otlp.example:4318/base/v1/logs');
    expect(otelOf('', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: 'http://b:9999/custom' }).breaks?.url).toBe('http://b:9999/custom');
    // The flag wins over the environment; gRPC endpoints are used as given.
    expect(otelOf('http://flag:4317', { OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: 'http://b:1/x', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }).breaks).toEqual({
      url: 'http://flag:4317',
      protocol: 'grpc',
      headers: {},
    });
    expect(otelOf('', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_LOGS_EXPORTER: 'none' }).breaks).toBeUndefined();
    expect(otelOf('http://a:4318', { OTEL_SDK_DISABLED: 'true' }).breaks).toBeUndefined();
  });

  it('reads protocol and headers per signal, falling back to the generic variables', () => {
    const otel = otelOf('http://c:4318', {
      OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
      OTEL_EXPORTER_OTLP_LOGS_PROTOCOL: 'http/json',
      OTEL_EXPORTER_OTLP_HEADERS: 'Authorization=Bearer%20abc, x-team = platform',
      OTEL_SERVICE_NAME: 'cachebreak-eu',
    });
    expect(otel).toMatchObject({ serviceName: 'cachebreak-eu', breaks: { protocol: 'http/json', headers: { authorization: 'Bearer abc', 'x-team': 'platform' } } });
  });

  it('traces itself only with OTEL_TRACES_EXPORTER=otlp, to the OTel default endpoint when none is given', () => {
    expect(otelOf('', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318' }).traces).toBeUndefined();
    expect(otelOf('', { OTEL_TRACES_EXPORTER: 'otlp' }).traces).toEqual({ url: 'http://localhost:4318/v1/traces', protocol: 'http/protobuf', headers: {} });
    expect(otelOf('', { OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc' }).traces?.url).toBe('http://localhost:4317');
    expect(otelOf('', { OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318' }).traces?.url).toBe('http://a:4318/v1/traces');
  });

  it('names the variable and the problem for every bad value', () => {
    const bad = (flag: string, env: Record<string, string>) => () => otelOf(flag, env);
    expect(bad('', { OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow(new ConfigError('OTEL_EXPORTER_OTLP_ENDPOINT: expected an http:// or https:// URL, got "collector:4318"'));
    expect(bad('', { OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: 'not a url' })).toThrow(
      new ConfigError('OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: expected a URL such as http://collector:4318, got "not a url"'),
    );
    expect(bad('http://a', { OTEL_EXPORTER_OTLP_PROTOCOL: 'http' })).toThrow(new ConfigError('OTEL_EXPORTER_OTLP_PROTOCOL: expected one of grpc, http/protobuf, http/json, got "http"'));
    expect(bad('http://a', { OTEL_EXPORTER_OTLP_LOGS_HEADERS: 'novalue' })).toThrow(new ConfigError('OTEL_EXPORTER_OTLP_LOGS_HEADERS: expected key=value pairs separated by commas'));
    expect(bad('', { OTEL_TRACES_EXPORTER: 'zipkin' })).toThrow(new ConfigError('OTEL_TRACES_EXPORTER: cachebreak exports only with otlp (or none), got "zipkin"'));
    expect(bad('', { OTEL_SDK_DISABLED: 'maybe' })).toThrow(new ConfigError('OTEL_SDK_DISABLED: expected true or false, got "maybe"'));
    expect(() => parseOptions(['otlp-export-endpoint'], ['--otlp-export-endpoint', 'ftp://x'], {})).toThrow(
      new ConfigError('--otlp-export-endpoint: expected an http:// or https:// URL, got "ftp://x"'),
    );
  });
});
