// The API key that `import --server` and `tail --server` send (--key or
// CACHEBREAK_KEY), and what they say when the server refuses it: what is
// wrong and what to do, never the key itself (at most the public prefix of a
// cachebreak key, as `keys list` shows it).
import { keyPrefix } from '../auth/keys.js';

/** The Authorization header for a key; none without one. */
export function keyHeaders(key: string): Record<string, string> {
  return key === '' ? {} : { authorization: `Bearer ${key}` };
}

/** A key as `keys list` names it: its prefix, only when it has the shape of a cachebreak key. */
function shown(key: string): string {
  return /^cb_[A-Za-z0-9_-]{32}$/.test(key) ? `the key ${keyPrefix(key)}…` : 'the key given';
}

interface ErrorAnswer {
  error?: { message?: string; hint?: string };
}

/** Whether a status means the key is missing, unknown or not allowed: retrying cannot help. */
export function isRefusal(status: number): boolean {
  return status === 401 || status === 403;
}

/** The message for a 401 or 403, with what to do. */
export function refusalMessage(url: string, status: number, answer: ErrorAnswer, key: string): string {
  const said = answer.error?.message ?? (status === 401 ? 'unauthorized' : 'forbidden');
  if (status === 401 && key === '') {
    return `${url} answered 401 (${said}): pass an API key with scope ingest in CACHEBREAK_KEY (or --key)`;
  }
  if (status === 401) {
    return `${url} answered 401 (${said}) for ${shown(key)}: check CACHEBREAK_KEY (or --key); create a key with cachebreak keys create --scope ingest on the server's database`;
  }
  return `${url} answered 403 (${said})${answer.error?.hint ? `: ${answer.error.hint}` : ''}`;
}
