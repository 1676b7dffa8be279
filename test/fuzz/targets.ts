// The decoders cachebreak exposes to untrusted bytes, each with a corpus of
// valid samples to mutate. A target must answer every input with a result or
// a clear rejection (an error naming a field, or a CachebreakError with a
// message and a hint) — anything else is a failure.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CachebreakError } from '../../src/errors.js';
import { decodeEvents } from '../../src/ingest/http/decode.js';
import { toCacheEvent } from '../../src/ingest/http/events.js';
import { loadRequest, REQUEST_FIXTURES } from '../core/request-fixtures.js';
import { toWire, turn } from '../core/scenario.js';

export interface FuzzTarget {
  name: string;
  /** Valid inputs to start mutations from. */
  corpus: Buffer[];
  /** Whether inputs are JSON text (enables structural mutations). */
  json: boolean;
  /** Throws only when the decoder misbehaves. */
  run(input: Buffer): void;
}

export class UnclearRejection extends Error {}

/** A CachebreakError with a message and a hint is a clear rejection; anything else thrown is a failure. */
export function expectClear(error: unknown): void {
  if (error instanceof CachebreakError && error.message.length > 0 && error.hint.length > 0) return;
  throw error;
}

function expectNamed(field: string, message: string): void {
  if (field.length === 0 || message.length === 0) throw new UnclearRejection(`a rejection without a field or message: ${JSON.stringify({ field, message })}`);
}

function decodeAll(input: Buffer, type: string): void {
  let values;
  try {
    values = decodeEvents(input, type);
  } catch (error) {
    expectClear(error);
    return;
  }
  for (const value of values) {
    if (!value.ok) {
      expectNamed('event', value.error);
      continue;
    }
    const converted = toCacheEvent(value.value);
    if (!converted.ok) expectNamed(converted.field, converted.error);
  }
}

const FIXTURES = fileURLToPath(new URL('../fixtures/', import.meta.url));

/** Every shape of event a client sends: turns, split snapshot/usage, raw bodies, each provider's raw usage. */
function eventCorpus(): Record<string, unknown>[] {
  const events: Record<string, unknown>[] = [toWire(turn('r1')), toWire(turn('r2', { expectMiss: 'compaction', messageHashes: ['a', 'b'] }))];
  const usageDir = join(FIXTURES, 'usage');
  for (const provider of readdirSync(usageDir)) {
    for (const file of readdirSync(join(usageDir, provider))) {
      const fixture = JSON.parse(readFileSync(join(usageDir, provider, file), 'utf8')) as { raw?: unknown; provider?: string };
      events.push({ type: 'usage', requestId: `u_${provider}_${file}`, sessionId: 's', ts: 1796032800000, provider, usage: fixture.raw });
    }
  }
  for (const name of REQUEST_FIXTURES) {
    const body = loadRequest(name);
    events.push({
      type: 'snapshot', requestId: `s_${name}`, sessionId: 's', ts: '2026-11-30T10:00:00Z', model: String(body.model ?? 'm'),
      ...(body.system !== undefined ? { system: body.system } : {}),
      ...(Array.isArray(body.tools) ? { toolDefinitions: body.tools } : {}),
    });
  }
  return events;
}

export function targets(): FuzzTarget[] {
  const events = eventCorpus();
  return [
    {
      name: 'events-json',
      corpus: [Buffer.from(JSON.stringify({ events })), Buffer.from(JSON.stringify(events.slice(0, 3))), ...events.map((e) => Buffer.from(JSON.stringify([e])))],
      json: true,
      run: (input) => decodeAll(input, 'application/json'),
    },
    {
      name: 'events-ndjson',
      corpus: [Buffer.from(events.map((e) => JSON.stringify(e)).join('\n')), Buffer.from(events.slice(0, 4).map((e) => JSON.stringify(e)).join('\r\n') + '\n')],
      json: false,
      run: (input) => decodeAll(input, 'application/x-ndjson'),
    },
  ];
}
