// `cachebreak keys create|list|revoke`: API keys per project. A new key is
// printed once (alone on stdout, so it can be captured); only its hash is kept.
import { ConfigError } from '../config.js';
import { SERVICE_DETECTION } from '../prices/index.js';
import { generateKey, hashKey, keyPrefix, parseScopes } from '../auth/keys.js';
import { COMMAND_PG_POOL, openStore } from '../store/open.js';
import type { ApiKey, KeyState } from '../store/store.js';
import type { Command } from './command.js';

const USAGE = 'keys create|list|revoke [ID|PREFIX] [options]';

function describe(key: ApiKey): string {
  const state = key.revokedMs === null ? 'active' : `revoked ${new Date(key.revokedMs).toISOString()}`;
  return `${String(key.id).padEnd(4)} ${key.prefix}…  ${key.project}  ${key.scopes.join(',')}  ${state}  created ${new Date(key.createdMs).toISOString()}${key.name ? `  ${key.name}` : ''}`;
}

/** What a server on this database does about keys: the explicit open or locked state. */
function accessLine(state: KeyState): string {
  switch (state) {
    case 'none':
      return (
        'Access: open. No API key exists: a server on this database answers without one, but only on loopback (or with\n' +
        '--insecure-no-auth), only requests addressed to localhost, an IP address or a --public-url name, and none that came\n' +
        'through a proxy. Create a key to lock it.'
      );
    case 'active':
      return 'Access: locked. Every request but /healthz and /readyz needs an active key.';
    case 'revoked':
      return (
        'Access: locked. Every key is revoked: a server on this database refuses every request but /healthz and /readyz\n' +
        'until a key is created. It does not open again (unless started with --insecure-no-auth).'
      );
  }
}

export const keysCommand: Command<'db' | 'project' | 'scope' | 'name' | 'json'> = {
  name: 'keys',
  summary: 'Create, list and revoke API keys (scopes: ingest, read, admin) per project.',
  usage: USAGE,
  options: ['db', 'project', 'scope', 'name', 'json'],
  details: [
    'keys create --project P --scope ingest,read   prints a new key once; only its hash is stored',
    'keys list [--json]                             every project\'s keys, by id and prefix (never the key)',
    'keys revoke ID|PREFIX                          the key stops working within a second',
    '',
    'Once any key exists, every route but /healthz and /readyz needs one:',
    '  Authorization: Bearer <key>  (or Basic auth with the key as the password)',
    'Revoking the last key keeps the server locked; it answers without a key again only if started with',
    '--insecure-no-auth. keys list starts with the access state: open (no key was ever created) or locked.',
  ].join('\n'),
  async run({ values, positionals }, io) {
    const [action, target] = positionals;
    // Listing only reads: a read-only database can still be listed.
    const store = await openStore(values.db, SERVICE_DETECTION, { pgPool: COMMAND_PG_POOL, sqlite: { mustWrite: action !== 'list' } });
    try {
      switch (action) {
        case 'create': {
          const scopes = parseScopes(values.scope);
          if ('unknown' in scopes) throw new ConfigError(`--scope: unknown scope "${scopes.unknown}"; use ingest, read or admin`);
          if (scopes.length === 0) throw new ConfigError('--scope: name at least one of ingest, read, admin');
          const key = generateKey();
          const created = await store.createKey({
            project: values.project,
            hash: hashKey(key),
            prefix: keyPrefix(key),
            scopes,
            name: values.name === '' ? null : values.name,
            createdMs: Date.now(),
          });
          io.stdout(`${key}\n`);
          io.stderr(`Created key ${created.id} (${created.prefix}…) for project ${created.project} with scope ${scopes.join(',')}.\nStore it now: it is not shown again.\n`);
          return 0;
        }
        case 'list': {
          const keys = await store.listKeys();
          if (values.json) io.stdout(JSON.stringify(keys, null, 2) + '\n');
          else io.stdout(`${accessLine(await store.keyState())}\n${keys.map((k) => describe(k) + '\n').join('')}`);
          return 0;
        }
        case 'revoke': {
          if (!target) throw new ConfigError('keys revoke: name the key by its id or prefix (see keys list)');
          const revoked = await store.revokeKey(target, Date.now());
          if (!revoked) {
            io.stderr(`cachebreak keys: no key with id or prefix "${target}"\n`);
            return 1;
          }
          io.stdout(`${describe(revoked)}\n`);
          if ((await store.keyState()) === 'revoked') {
            io.stderr('That was the last active key: a server on this database now refuses every request until a key is created; it does not open again (unless started with --insecure-no-auth).\n');
          }
          return 0;
        }
        default:
          throw new ConfigError(`expected create, list or revoke, got ${action === undefined ? 'nothing' : `"${action}"`}; usage: cachebreak ${USAGE}`);
      }
    } finally {
      await store.close();
    }
  },
};
