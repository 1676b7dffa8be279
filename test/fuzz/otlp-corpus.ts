// Valid OTLP requests for the fuzzer to mutate, made the way exporters make
// them: real SDK records (logs, spans, metrics) serialised by the exporters'
// own protobuf and JSON serializers.
import { JsonLogsSerializer, JsonMetricsSerializer, JsonTraceSerializer, ProtobufLogsSerializer, ProtobufMetricsSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { logs, metrics, resources, tracing } from '@opentelemetry/sdk-node';
import { toWire, turn, usage } from '../core/scenario.js';

const resource = resources.resourceFromAttributes({ 'service.name': 'claude-code', 'session.id': 'fuzz' });

async function logRecords() {
  const exporter = new logs.InMemoryLogRecordExporter();
  const provider = new logs.LoggerProvider({ resource, processors: [new logs.SimpleLogRecordProcessor({ exporter })] });
  const logger = provider.getLogger('com.anthropic.claude_code');
  logger.emit({
    body: 'claude_code.api_request',
    attributes: { 'event.name': 'api_request', 'session.id': 'fuzz', model: 'claude-sonnet-4-5', input_tokens: 12, cache_read_tokens: 40_000, cache_creation_tokens: 300, output_tokens: 90, request_id: 'req_1', query_source: 'sdk' },
  });
  const { type, ...fields } = toWire(turn('native_1', { usage: usage(30_000, 200) }));
  logger.emit({ eventName: `prompt_cache.${String(type)}`, attributes: JSON.parse(JSON.stringify({ ...fields, tools: (fields.tools as object[]).map((t) => JSON.stringify(t)) })) });
  await provider.forceFlush();
  return exporter.getFinishedLogRecords();
}

function spans() {
  const exporter = new tracing.InMemorySpanExporter();
  const provider = new tracing.BasicTracerProvider({ resource, spanProcessors: [new tracing.SimpleSpanProcessor(exporter)] });
  const tracer = provider.getTracer('genai');
  const span = tracer.startSpan('chat claude-sonnet-4-5', {
    attributes: {
      'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'anthropic', 'gen_ai.request.model': 'claude-sonnet-4-5',
      'gen_ai.response.id': 'msg_1', 'gen_ai.conversation.id': 'conv', 'gen_ai.usage.input_tokens': 40_500,
      'gen_ai.usage.cache_read.input_tokens': 40_000, 'gen_ai.usage.output_tokens': 80,
    },
  });
  span.addEvent('gen_ai.content', { note: 'x' });
  span.end();
  return exporter.getFinishedSpans();
}

async function metricData() {
  const exporter = new metrics.InMemoryMetricExporter(metrics.AggregationTemporality.CUMULATIVE);
  const reader = new metrics.PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 60_000 });
  const provider = new metrics.MeterProvider({ resource, readers: [reader] });
  const meter = provider.getMeter('claude-code');
  meter.createCounter('claude_code.token.usage').add(1_200, { model: 'claude-sonnet-4-5', type: 'cacheRead' });
  meter.createHistogram('gen_ai.client.token.usage').record(300, { 'gen_ai.token.type': 'input', 'gen_ai.request.model': 'gpt-5' });
  await reader.forceFlush();
  const collected = exporter.getMetrics();
  await provider.shutdown();
  return collected;
}

export interface OtlpCorpus {
  logs: { protobuf: Buffer[]; json: Buffer[] };
  traces: { protobuf: Buffer[]; json: Buffer[] };
  metrics: { protobuf: Buffer[]; json: Buffer[] };
}

const bytes = (value: Uint8Array | undefined) => Buffer.from(value ?? []);

export async function otlpCorpus(): Promise<OtlpCorpus> {
  const l = await logRecords();
  const s = spans();
  const m = await metricData();
  return {
    logs: { protobuf: [bytes(ProtobufLogsSerializer.serializeRequest(l))], json: [bytes(JsonLogsSerializer.serializeRequest(l))] },
    traces: { protobuf: [bytes(ProtobufTraceSerializer.serializeRequest(s))], json: [bytes(JsonTraceSerializer.serializeRequest(s))] },
    metrics: { protobuf: m.map((r) => bytes(ProtobufMetricsSerializer.serializeRequest(r))), json: m.map((r) => bytes(JsonMetricsSerializer.serializeRequest(r))) },
  };
}
