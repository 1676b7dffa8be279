// `cachebreak report`: a terminal summary of a database — cache rate, breaks
// by reason, the tools that broke the cache, the worst sessions.
import { existsSync } from 'node:fs';
import { ConfigError } from '../config.js';
import { SERVICE_DETECTION } from '../prices/index.js';
import { COMMAND_PG_POOL, isPostgresUrl, openStore, shownDb } from '../store/open.js';
import type { Store } from '../store/store.js';
import type { Command } from './command.js';
import { gatherReport, type Report } from './report-data.js';
import { renderReport } from './report-text.js';

export const reportCommand: Command<'db' | 'project' | 'from' | 'to' | 'json'> = {
  name: 'report',
  summary: 'Summarise a database in the terminal: cache rate, breaks by reason, changed tools, worst sessions, what to change.',
  usage: 'report [options]',
  options: ['db', 'project', 'from', 'to', 'json'],
  details: 'Exit code: 0 with a report (also an empty one), 1 when there is no database to read, 2 for a usage error.',
  async run({ values }, io) {
    const range = { from: values.from, to: values.to };
    if (range.from !== undefined && range.to !== undefined && range.from >= range.to) {
      throw new ConfigError('--from: must be earlier than --to');
    }
    // Opening a missing path would create an empty database just to report on it.
    if (!isPostgresUrl(values.db) && !existsSync(values.db)) {
      io.stderr(`cachebreak report: no database at ${shownDb(values.db)}; run \`cachebreak demo\` or point --db at one\n`);
      return 1;
    }
    let report: Report;
    let store: Store | undefined;
    try {
      store = await openStore(values.db, SERVICE_DETECTION, { pgPool: COMMAND_PG_POOL });
      // A report reads: judging the turns again is the server's or `reevaluate`'s, with their options.
      if (await store.needsReevaluation()) {
        io.stderr(`cachebreak report: ${shownDb(values.db)} was judged by older detection rules; run \`cachebreak reevaluate --db ${shownDb(values.db)}\` (with your server's options), or start the server, to judge it by these\n`);
      }
      report = await gatherReport(store, SERVICE_DETECTION.prices, shownDb(values.db), values.project, range);
    } catch (error) {
      if (!(error instanceof Error && 'code' in error && String(error.code).startsWith('SQLITE_'))) throw error;
      io.stderr(`cachebreak report: cannot read ${shownDb(values.db)} as a cachebreak database: ${error.message}\n`);
      return 1;
    } finally {
      await store?.close();
    }
    io.stdout(values.json ? JSON.stringify(report, null, 2) + '\n' : renderReport(report));
    return 0;
  },
};
