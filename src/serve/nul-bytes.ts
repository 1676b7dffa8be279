// A NUL byte (%00, \u0000) is in no stored value, and PostgreSQL's text cannot
// hold one: a filter, path or query value carrying it is refused here, at the
// boundary, with the same 400 on both stores, before any store sees it.
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../app.js';
import { CachebreakError } from '../errors.js';

function nulError(field: string): CachebreakError {
  return new CachebreakError('bad_request', `${field}: contains a NUL byte (%00, \\u0000), which no stored value holds`, `remove the NUL byte from ${field}`);
}

/** The query parameter or path of the request URL that carries a NUL byte; undefined when none does. */
function nulInUrl(href: string): string | undefined {
  // Percent-decoding yields a NUL only from %00.
  if (!href.includes('%00')) return undefined;
  const url = new URL(href);
  if (url.pathname.includes('%00')) return 'path';
  for (const [name, value] of url.searchParams) {
    if (name.includes('\0') || value.includes('\0')) return name.replaceAll('\0', '%00');
  }
  return 'query';
}

/** Refuses every request whose path or query string carries a NUL byte. */
export function refuseNulInUrl(): MiddlewareHandler<AppEnv> {
  return async function refuseNulInUrl(c, next) {
    const field = nulInUrl(c.req.url);
    if (field !== undefined) throw nulError(field);
    await next();
  };
}

/**
 * Throws a 400 naming a string in `value` (a parsed JSON body, or part
 * of one, at `field`; '' for a whole body) that carries a NUL byte. Walks
 * without recursion: a body may nest as deep as its size allows.
 */
export function refuseNulInJson(value: unknown, field: string): void {
  const pending: [unknown, string][] = [[value, field]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [item, at] = next;
    if (typeof item === 'string') {
      if (item.includes('\0')) throw nulError(at === '' ? 'body' : at);
    } else if (Array.isArray(item)) {
      item.forEach((element, index) => pending.push([element, `${at}[${index}]`]));
    } else if (typeof item === 'object' && item !== null) {
      for (const [key, element] of Object.entries(item)) pending.push([key, at], [element, at === '' ? key : `${at}.${key}`]);
    }
  }
}
