// The app in-process with a pinned clock: on a fresh SQLite file
// (testApp), or on a fresh database of the kind under test (storeApp, for
// tests whose subject is what the store answers: ../store-under-test.ts).
import { buildApp } from '../../src/app.js';
import { InflightBudget } from '../../src/ingest/inflight.js';
import { DEFAULT_LIMITS, type Limits } from '../../src/ingest/limits.js';
import { Authenticator } from '../../src/auth/authenticator.js';
import { Pipeline } from '../../src/ingest/pipeline.js';
import { Counters } from '../../src/telemetry/counters.js';
import { createLogger } from '../../src/telemetry/logfmt.js';
import type { Store } from '../../src/store/store.js';
import { freshStore } from '../helpers.js';
import { storeUnderTest } from '../store-under-test.js';

export const NOW = Date.parse('2026-11-30T12:00:00.000Z');

export interface AppOptions {
  bodyLimit?: number;
  limits?: Limits;
  inflightLimit?: number;
  traceLink?: string;
}

export function testApp(options: AppOptions = {}) {
  return appOn(freshStore(), options);
}

export async function storeApp(options: AppOptions = {}) {
  return appOn(await storeUnderTest(), options);
}

function appOn<S extends Store>(store: S, options: AppOptions) {
  const counters = new Counters();
  const logLines: string[] = [];
  const log = createLogger((line) => logLines.push(line), () => new Date(NOW));
  const pipeline = new Pipeline(store, counters, log);
  const auth = new Authenticator(store, { openProject: 'default', openWithoutKeys: true, rateLimit: { perSecond: 1000, burst: 2000 }, now: () => NOW });
  const app = buildApp({
    store, pipeline, counters, log, bodyLimit: options.bodyLimit ?? 1024 * 1024, auth, limits: options.limits ?? DEFAULT_LIMITS, now: () => NOW,
    ...(options.inflightLimit !== undefined ? { inflight: new InflightBudget(options.inflightLimit) } : {}),
    ...(options.traceLink !== undefined ? { traceLink: options.traceLink } : {}),
  });
  const post = (body: unknown, headers: Record<string, string> = {}) =>
    app.request('/v1/events', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  const get = async (path: string) => {
    const response = await app.request(path);
    return { status: response.status, body: (await response.json()) as any };
  };
  return { app, store, counters, logLines, post, get };
}
