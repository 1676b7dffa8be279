// Token counters that harnesses export as metrics → TokenPoints. They are
// totals per model and kind, not calls: they create no turns.
//
// Kinds are normalised across sources, and `input` keeps one meaning: the
// total input INCLUDING the cache, as Qwen Code, Gemini CLI and the GenAI
// conventions count it. Claude Code's `input` EXCLUDES the cache, so it is
// `uncached_input`; adding it to `cache_read` never double counts.
import { hashValue } from '../../../core/hash.js';
import type { TokenPoint } from '../../../store/store.js';
import type { Attributes, MetricPoint } from '../records.js';
import { firstText, serviceName, text } from './attributes.js';
import { ignored, MappingError, type Outcome, type Source } from './source.js';
import type { MappingContext } from './context.js';
import { LIMIT_OPTIONS } from '../../limits.js';
import { timeProblem } from '../../../time.js';

interface TokenMetric {
  source: string;
  /** The point attribute that names the kind. */
  typeKey: string;
  kinds: Readonly<Record<string, string>>;
}

const METRICS: Readonly<Record<string, TokenMetric>> = {
  'qwen-code.token.usage': {
    source: 'qwen-code',
    typeKey: 'type',
    kinds: { input: 'input', output: 'output', cache: 'cache_read', thought: 'thought' },
  },
  'gemini_cli.token.usage': {
    source: 'gemini_cli',
    typeKey: 'type',
    kinds: { input: 'input', output: 'output', cache: 'cache_read', thought: 'thought', tool: 'tool' },
  },
  'claude_code.token.usage': {
    source: 'claude_code',
    typeKey: 'type',
    kinds: { input: 'uncached_input', output: 'output', cacheRead: 'cache_read', cacheCreation: 'cache_write' },
  },
  'gen_ai.client.token.usage': {
    source: 'gen_ai',
    typeKey: 'gen_ai.token.type',
    kinds: {
      input: 'input',
      output: 'output',
      cache_read: 'cache_read',
      cache_creation: 'cache_write',
      cache_write: 'cache_write',
      reasoning: 'thought',
    },
  },
};

/** Harnesses that export their own token counter as well as gen_ai.client.token.usage. */
const OWN_COUNTER = new Set(['qwen-code', 'gemini-cli', 'claude-code']);

/** Resources repeat across the points of one request: hash each once. */
const resourceHashes = new WeakMap<Attributes, string>();

function resourceHash(resource: Attributes): string {
  let hash = resourceHashes.get(resource);
  if (hash === undefined) {
    hash = hashValue(resource);
    resourceHashes.set(resource, hash);
  }
  return hash;
}

/**
 * What identifies one series in OTel: the resource, the scope, the metric
 * name and the point's attributes. Hashed, never stored: a resource can hold
 * a command line with prompt text.
 */
function seriesOf(point: MetricPoint): string {
  return hashValue([resourceHash(point.resource), point.scope.name, point.scope.version, point.metric, point.temporality, point.attributes]);
}

function tokenPoint(point: MetricPoint, context: MappingContext): Outcome | undefined {
  const metric = Object.hasOwn(METRICS, point.metric) ? METRICS[point.metric] : undefined;
  if (metric === undefined) return undefined;
  if (point.metric === 'gen_ai.client.token.usage' && OWN_COUNTER.has(serviceName(point) ?? point.scope.name)) {
    return ignored('covered_by_harness_metric');
  }
  if (point.kind === 'gauge') return ignored('gauge');
  if (point.kind === 'sum' && !point.monotonic) return ignored('not_monotonic');
  if (point.temporality === 'unspecified') return ignored('unspecified_temporality');
  const type = text(point.attributes, metric.typeKey);
  const kind = type !== undefined && Object.hasOwn(metric.kinds, type) ? metric.kinds[type] : undefined;
  if (kind === undefined) return ignored('unknown_token_type');
  if (!Number.isFinite(point.value) || point.value < 0) {
    throw new MappingError(`${point.metric}: expected a non-negative token count, got ${point.value}`);
  }
  const model = firstText(point.attributes, ['model', 'gen_ai.response.model', 'gen_ai.request.model']) ?? '';
  const { maxString } = context.limits;
  if (model.length > maxString) throw new MappingError(`${point.metric}: model longer than ${maxString} characters (${LIMIT_OPTIONS.maxString})`);
  if (model.includes('\0')) throw new MappingError(`${point.metric}: model contains a NUL byte (\\u0000), which no stored value holds; remove it`);
  const outside = timeProblem(point.timeMs);
  if (outside !== undefined) throw new MappingError(`${point.metric}: time ${outside}`);
  return {
    tokenPoints: [
      {
        series: seriesOf(point),
        source: metric.source,
        model,
        kind,
        temporality: point.temporality,
        startMs: Math.floor(point.startMs),
        timeMs: Math.floor(point.timeMs),
        value: Math.round(point.value),
      } satisfies TokenPoint,
    ],
  };
}

export const tokenMetrics: Source = { name: 'metrics', point: tokenPoint };
