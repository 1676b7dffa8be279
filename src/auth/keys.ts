// API keys: 192 random bits, shown once; only their SHA-256 is stored.
import { createHash, randomBytes } from 'node:crypto';
import { SCOPES, type Scope } from '../store/store.js';

const PREFIX = 'cb_';

export function generateKey(): string {
  return PREFIX + randomBytes(24).toString('base64url');
}

export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** The first characters of a key: enough to recognise it in a listing, useless to an attacker. */
export function keyPrefix(key: string): string {
  return key.slice(0, PREFIX.length + 6);
}

/** "ingest,read" → scopes, or an error naming the unknown one. */
export function parseScopes(raw: string): Scope[] | { unknown: string } {
  const scopes = raw.split(',').map((s) => s.trim()).filter((s) => s !== '');
  for (const scope of scopes) if (!(SCOPES as readonly string[]).includes(scope)) return { unknown: scope };
  return [...new Set(scopes)] as Scope[];
}
