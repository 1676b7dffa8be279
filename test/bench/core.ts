// Detection core figures (one core): stream evaluation with 100-tool
// snapshots, and hashing raw tool definitions against JSON.stringify.
import { hashContent, hashString } from '../../src/core/hash.js';
import { DEFAULT_DETECTION } from '../../src/core/options.js';
import { toPrefix } from '../../src/core/prefix.js';
import { emptyHistory } from '../../src/core/history.js';
import { evaluateOrdered } from '../../src/core/stream.js';
import type { ToolRef, Turn } from '../../src/core/types.js';
import { throughput, type Row } from './lib.js';

const TURNS = 20_000;
const TOOL_COUNT = 100;

function toolRefs(version: number): ToolRef[] {
  return Array.from({ length: TOOL_COUNT }, (_, i) => ({
    name: `mcp__server${i % 7}__tool_${i}`,
    // One tool's schema changes per version: every list differs from the last.
    schemaHash: hashString(`schema-${i}-${i === version % TOOL_COUNT ? version : 0}`),
  }));
}

const VERSIONS = 100;

/**
 * A stream of turns with 100-tool prefixes. `changing`: each turn's list
 * differs from the last (cycling through 100 versions, as a live harness would
 * hold a few lists, not one per turn). `missing`: every turn is a miss, so
 * attribution runs on each; otherwise turns read what the last one wrote.
 */
function stream(changing: boolean, missing: boolean): Turn[] {
  const prefixes = Array.from({ length: changing ? VERSIONS : 1 }, (_, v) =>
    toPrefix({ model: 'claude-sonnet-4-5', systemHash: 's', tools: toolRefs(v) }),
  );
  const usage = missing
    ? { uncached: 100, read: 0, write: 50_000, write1h: 0, output: 200, cacheReported: true, writeReported: true }
    : { uncached: 100, read: 50_000, write: 400, write1h: 0, output: 200, cacheReported: true, writeReported: true };
  return Array.from({ length: TURNS }, (_, i) => ({
    requestId: `req_${i}`,
    sessionId: 's',
    agentId: 'main',
    ts: i * 1000,
    model: 'claude-sonnet-4-5',
    prefix: prefixes[i % prefixes.length]!,
    usage,
  }));
}

export function toolDefinitions(): object[] {
  return Array.from({ length: TOOL_COUNT }, (_, i) => ({
    name: `mcp__server${i % 7}__tool_${i}`,
    description: `Tool ${i}: reads or changes project state. `.repeat(8),
    input_schema: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'Absolute path of the file to operate on.' },
        offset: { type: 'integer', minimum: 0, description: 'Line to start from.' },
        limit: { type: 'integer', minimum: 1, maximum: 2000 },
        mode: { type: 'string', enum: ['read', 'write', 'append'] },
      },
      required: ['path'],
    },
    ...(i === TOOL_COUNT - 1 ? { cache_control: { type: 'ephemeral' } } : {}),
  }));
}

export function benchCore(): Row[] {
  const evaluate = (turns: Turn[]) => throughput(() => evaluateOrdered(emptyHistory(), turns, DEFAULT_DETECTION), TURNS);
  const unchangedHits = evaluate(stream(false, false));
  const unchangedMisses = evaluate(stream(false, true));
  const changingMisses = evaluate(stream(true, true));
  const refs = toolRefs(1);
  const prefixes = throughput(() => toPrefix({ model: 'm', systemHash: 's', tools: refs }), 1);

  const defs = toolDefinitions();
  const megabytes = JSON.stringify(defs).length / 1e6;
  const hashing = throughput(() => defs.forEach((d) => hashContent(d)), megabytes);
  const stringify = throughput(() => defs.forEach((d) => JSON.stringify(d)), megabytes);

  return [
    { figure: 'core: evaluate stream, 100 tools unchanged, cache warm', value: unchangedHits, unit: 'turns/s', aim: '≥ 1,000,000' },
    { figure: 'core: evaluate stream, 100 tools unchanged, every turn a miss', value: unchangedMisses, unit: 'turns/s', aim: '≥ 1,000,000' },
    { figure: 'core: evaluate stream, every tool list differs, every turn a miss', value: changingMisses, unit: 'turns/s', aim: '≥ 100,000' },
    { figure: 'core: build a 100-tool prefix (aggregate hash), once per snapshot', value: prefixes, unit: 'snapshots/s' },
    {
      figure: 'core: hash raw tool definitions (canonical JSON + xxh64)',
      value: hashing,
      unit: 'MB/s',
      baseline: { label: 'JSON.stringify', value: stringify },
    },
  ];
}
