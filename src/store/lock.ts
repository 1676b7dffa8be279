// One server per database file: `serve` holds DB.lock (its pid) while it runs.
// Two servers on one file would each keep their own in-memory state (OTLP
// halves waiting for their partner, counters, retention) and contradict each
// other. `import --db`, `tail --db` and `reevaluate` take no lock: SQLite
// serialises their writes, and they are meant for a file no server holds.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { DatabaseUnusable } from './db.js';

export interface DatabaseLock {
  release(): void;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function holder(lockPath: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(lockPath, 'utf8'), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Takes `path`.lock, or throws DatabaseUnusable naming the server that holds
 * it. A lock left by a process that no longer runs (killed, crashed) is taken over.
 */
export function lockDatabase(path: string): DatabaseLock | undefined {
  if (path === ':memory:') return undefined;
  const lockPath = `${path}.lock`;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(lockPath, `${process.pid}\n`, { flag: 'wx' });
      return { release: () => rmSync(lockPath, { force: true }) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw new DatabaseUnusable(`cannot create the lock file ${lockPath} (${(error as Error).message}): the directory of --db must be writable`, 'LOCK', error);
      }
    }
    const pid = holder(lockPath);
    // A lock naming this very process is stale: in a container every start may get the same pid (often 1).
    if (pid !== undefined && pid !== process.pid && alive(pid)) {
      throw new DatabaseUnusable(
        `the database ${path} is in use by another cachebreak server (pid ${pid}, see ${lockPath}): ` +
          `stop that server, send to it instead (cachebreak import --server), or point --db at another file`,
        'LOCKED',
        undefined,
      );
    }
    rmSync(lockPath, { force: true });
  }
  throw new DatabaseUnusable(`cannot take the lock file ${lockPath}: another server is starting on ${path}`, 'LOCKED', undefined);
}
