// The main thread's side of the read routes when reader threads answer them:
// authenticate here, then hand the request over and relay the reply.
import type { Context, Hono } from 'hono';
import type { AppEnv } from '../../app.js';
import { readRawBody } from '../../ingest/http/body.js';
import type { ReaderPool } from './pool.js';

/** Names the caller's project to a reader thread; never taken from a client. */
export const FORWARDED_PROJECT = 'x-cachebreak-project';

const DROPPED = new Set(['authorization', 'content-length', FORWARDED_PROJECT]);

async function forward(c: Context<AppEnv>, readers: ReaderPool, queryBodyLimit: number): Promise<Response> {
  const headers: [string, string][] = [...c.req.raw.headers].filter(([name]) => !DROPPED.has(name));
  headers.push([FORWARDED_PROJECT, c.var.project], ['x-request-id', c.var.requestId]);
  const body = c.req.method === 'GET' || c.req.method === 'HEAD' ? null : await readRawBody(c.req.raw, { limit: queryBodyLimit, option: '--query-body-limit' });
  const reply = await readers.request({ method: c.req.method, url: c.req.url, headers, body });
  return new Response(reply.body, { status: reply.status, headers: reply.headers });
}

/** Answers each of `routes` by forwarding it to `readers`. */
export function registerForwardedReads(
  app: Hono<AppEnv>,
  routes: readonly { method: string; path: string }[],
  readers: ReaderPool,
  queryBodyLimit: number,
): void {
  for (const { method, path } of routes) app.on(method, path, (c) => forward(c, readers, queryBodyLimit));
}
