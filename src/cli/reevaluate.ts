// `cachebreak reevaluate`: evaluates every stored turn again under this
// version's detection rules and the given options. A server does this by
// itself when it opens a database written under older rules; this command is
// for new thresholds or prices, and for upgrading a database offline.
import { existsSync } from 'node:fs';
import { detectionOf } from '../config.js';
import { reevaluateLogged } from '../reevaluation.js';
import { COMMAND_PG_POOL, isPostgresUrl, openStore } from '../store/open.js';
import { createLogger } from '../telemetry/logfmt.js';
import type { Command } from './command.js';

export const reevaluateCommand: Command<'db' | 'min-miss-tokens' | 'miss-ratio' | 'min-cacheable' | 'prices'> = {
  name: 'reevaluate',
  summary: 'Evaluate every stored turn again: new detection rules, thresholds or prices. Nothing stored is lost.',
  usage: 'reevaluate [options]',
  options: ['db', 'min-miss-tokens', 'miss-ratio', 'min-cacheable', 'prices'],
  details: [
    'States, baselines and break records are computed again from the stored turns; events are kept as they are.',
    'A server evaluates a database written under older rules by itself when it starts.',
    'Give the same thresholds and prices the server runs with, or its later writes will judge by others.',
    'Exit code: 0 when done, 1 when there is no database, 2 for a usage error.',
  ].join('\n'),
  async run({ values }, io) {
    if (!isPostgresUrl(values.db) && !existsSync(values.db)) {
      io.stderr(`cachebreak reevaluate: no database at ${values.db}; point --db at one\n`);
      return 1;
    }
    const store = await openStore(values.db, detectionOf(values), { pgPool: COMMAND_PG_POOL, sqlite: { mustWrite: true } });
    try {
      const result = await reevaluateLogged(store, createLogger(io.stderr), 'asked for on the command line');
      io.stdout(`Evaluated ${result.streams} streams again; ${result.breaksChanged} break records were found, changed or dropped.\n`);
      return 0;
    } finally {
      await store.close();
    }
  },
};
