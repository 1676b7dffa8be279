// Self-instrumentation: spans of cachebreak's own HTTP handling, exported
// over OTLP when OTEL_TRACES_EXPORTER=otlp (read in config.ts; off by
// default). Ingest routes are never traced: a cachebreak that receives its
// own telemetry would otherwise trace every export of its traces, forever.
import { Metadata } from '@grpc/grpc-js';
import { httpInstrumentationMiddleware } from '@hono/otel';
import { OTLPTraceExporter as GrpcTraceExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtoTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { NodeSDK, resources } from '@opentelemetry/sdk-node';
import type { MiddlewareHandler } from 'hono';
import type { OtlpTarget } from '../config.js';

/** Ingest routes: never traced. */
const UNTRACED = new Set(['/v1/events', '/v1/logs', '/v1/traces', '/v1/metrics']);

function exporterFor(target: OtlpTarget) {
  switch (target.protocol) {
    case 'grpc': {
      const metadata = new Metadata();
      for (const [key, value] of Object.entries(target.headers)) metadata.set(key, value);
      return new GrpcTraceExporter({ url: target.url, metadata });
    }
    case 'http/json':
      return new JsonTraceExporter({ url: target.url, headers: target.headers });
    default:
      return new ProtoTraceExporter({ url: target.url, headers: target.headers });
  }
}

export interface SelfTracing {
  /** A span per request, named by its route, except on ingest routes. */
  middleware: MiddlewareHandler;
  shutdown(): Promise<void>;
}

/**
 * Starts the process-wide tracer provider. Only traces are set up here:
 * metrics readers and log processors are given (empty) so that the SDK does
 * not configure them from the environment on its own.
 */
export function startSelfTracing(target: OtlpTarget, serviceName: string): SelfTracing {
  const sdk = new NodeSDK({
    resource: resources.resourceFromAttributes({ 'service.name': serviceName }),
    autoDetectResources: false,
    traceExporter: exporterFor(target),
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [],
  });
  sdk.start();
  const traced = httpInstrumentationMiddleware({ serviceName });
  return {
    middleware: async function selfTracing(c, next) {
      if (UNTRACED.has(c.req.path)) return next();
      return traced(c, next);
    },
    shutdown: () => sdk.shutdown(),
  };
}
