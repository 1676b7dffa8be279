// Several `cachebreak serve` processes on one PostgreSQL database, and a
// client that spreads batches of events over them as a load balancer would:
// each batch to a live node, a batch whose node died before answering sent
// again to another.
import fc from 'fast-check';
import type { CacheEvent } from '../../src/core/types.js';
import { wireEvent } from '../../src/ingest/http/wire.js';
import type { WireBreak, WireTurn } from '../e2e/api.js';
import { turnsOf } from '../e2e/api.js';
import { prng, shuffle, type WireEvent } from '../e2e/events.js';
import { getJson, postEvents, type Reply, type ServerProcess } from '../e2e/server.js';
import { eventsOf, requestArb } from '../store/random-workload.js';

/**
 * `workloads` random workloads of `requests` requests each (test/store's:
 * every shape a harness sends, ties, overlaps, late usage), each in sessions
 * of its own, with the first few events of each sent twice: as the wire
 * carries them.
 */
export function randomEvents(workloads: number, requests: number, seed: number): WireEvent[] {
  const events: CacheEvent[] = [];
  for (let w = 0; w < workloads; w++) {
    const [sample] = fc.sample(fc.array(requestArb, { minLength: requests, maxLength: requests }), { seed: seed + w, numRuns: 1 });
    const own = eventsOf(sample!).map((event) => ({
      ...event,
      requestId: `w${w}_${event.requestId}`,
      ...(event.sessionId !== undefined ? { sessionId: `w${w}_${event.sessionId}` } : {}),
    }));
    events.push(...own, ...own.slice(0, 3));
  }
  return events.map(wireEvent);
}

/** Every session named by `events`. */
export function sessionsIn(events: readonly WireEvent[]): string[] {
  return [...new Set(events.flatMap((e) => (typeof e.sessionId === 'string' ? [e.sessionId] : [])))].sort();
}

/** Batches of 1 to `max` events, in a shuffled order. */
export function smallBatches(events: readonly WireEvent[], max: number, seed: number): WireEvent[][] {
  const random = prng(seed);
  const shuffled = shuffle(events, random);
  const batches: WireEvent[][] = [];
  for (let i = 0; i < shuffled.length; ) {
    const size = 1 + Math.floor(random() * max);
    batches.push(shuffled.slice(i, i + size));
    i += size;
  }
  return batches;
}

export interface Delivery {
  /** Per batch, in the order given: the node that acknowledged it and its counts. */
  acknowledged: { node: number; accepted: number; duplicates: number }[];
  /** Batches sent again after their node died, or answered 503 or not at all. */
  resent: number;
  /** 503 answers, every one of which said when to retry (Retry-After). */
  unavailable: number;
}

export interface DeliverOptions {
  /** Requests in flight at once. */
  inFlight: number;
  seed: number;
  /** Called after each acknowledgement with how many batches are acknowledged so far. */
  onAcknowledged?(count: number): void;
  /** Called as a batch is sent to `node`. */
  onSend?(node: number): void;
  /** Whether a node was killed on purpose: only then is a failed request to it sent elsewhere. */
  isKilled(node: number): boolean;
  /**
   * Send again, as a client of a database that restarts does, a batch
   * answered 503 (with Retry-After) or not answered (the connection failed),
   * after a short pause instead of Retry-After's seconds, at most this many
   * times a batch. Default 0: any such answer fails the delivery.
   */
  retries?: number;
}

/**
 * Sends every batch to a live node chosen at random, `inFlight` at once;
 * each must be answered 200 with nothing rejected. A request to a node that
 * was killed is sent again to another live node (at most 3 tries a batch).
 */
export async function deliver(nodes: readonly ServerProcess[], batches: readonly WireEvent[][], options: DeliverOptions): Promise<Delivery> {
  const random = prng(options.seed);
  const acknowledged: Delivery['acknowledged'] = [];
  let resent = 0;
  let unavailable = 0;
  let next = 0;
  let done = 0;
  const retries = options.retries ?? 0;
  const send = async (index: number) => {
    const batch = batches[index]!;
    for (let attempt = 1; ; attempt++) {
      const live = nodes.map((_, i) => i).filter((i) => !options.isKilled(i));
      if (live.length === 0) throw new Error('every node is dead');
      const node = live[Math.floor(random() * live.length)]!;
      let reply: Reply;
      options.onSend?.(node);
      try {
        reply = await postEvents(nodes[node]!.url, batch);
      } catch (error) {
        if (options.isKilled(node) && attempt < 3) {
          resent++;
          continue;
        }
        if (attempt <= retries) {
          resent++;
          await new Promise((resolve) => setTimeout(resolve, 100));
          continue;
        }
        throw error;
      }
      if (reply.status === 503 && attempt <= retries) {
        if (!/^\d+$/.test(reply.headers.get('retry-after') ?? '')) throw new Error(`node ${node}: 503 without Retry-After: ${reply.text}`);
        unavailable++;
        resent++;
        await new Promise((resolve) => setTimeout(resolve, 100));
        continue;
      }
      try {
        if (reply.status !== 200) throw new Error(`node ${node}: ${reply.status} ${reply.text}`);
        const body = reply.body as { accepted: number; duplicates: number; rejected: unknown[] };
        if (body.rejected.length > 0 || body.accepted + body.duplicates !== batch.length) throw new Error(`node ${node}: ${reply.text}`);
        acknowledged[index] = { node, accepted: body.accepted, duplicates: body.duplicates };
        options.onAcknowledged?.(++done);
        return;
      } catch (error) {
        if (!options.isKilled(node) || attempt === 3) throw error;
        resent++;
      }
    }
  };
  const sender = async () => {
    while (next < batches.length) await send(next++);
  };
  await Promise.all(Array.from({ length: options.inFlight }, sender));
  return { acknowledged, resent, unavailable };
}

/**
 * What the API serves about the stored results: every break (all pages) and
 * every session's turns. Breaks come newest first; those that started at the
 * same time come in the order they were stored, which differs between two
 * deliveries of the same events (one server or several, either store): they
 * are put in request id order here, the one normalisation.
 */
export interface Results {
  breaks: WireBreak[];
  turns: Record<string, WireTurn[]>;
}

/** Reads every page of /v1/breaks, `limit` at a time (bounded: at most 1,000 pages). */
async function allBreaks(url: string, limit: number): Promise<WireBreak[]> {
  const breaks: WireBreak[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 1_000; page++) {
    const query: string = `/v1/breaks?limit=${limit}${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`;
    const body: { breaks: WireBreak[]; nextCursor: string | null } = await getJson(url, query);
    breaks.push(...body.breaks);
    cursor = body.nextCursor;
    if (cursor === null) return breaks;
  }
  throw new Error(`${url}: more than 1,000 pages of breaks`);
}

export async function resultsOf(url: string, sessions: readonly string[]): Promise<Results> {
  const turns: Record<string, WireTurn[]> = {};
  for (const session of sessions) turns[session] = await turnsOf(url, session);
  const breaks = await allBreaks(url, 25);
  const times = breaks.map((b) => Date.parse(b.ts as string));
  if (times.some((t, i) => i > 0 && t > times[i - 1]!)) throw new Error(`${url}: /v1/breaks is not newest first`);
  breaks.sort((a, b) => Date.parse(b.ts as string) - Date.parse(a.ts as string) || (a.requestId < b.requestId ? -1 : 1));
  return { breaks, turns };
}
