// A database that stops answering, for tests of what does not wait on it:
// SQLite locked by another process (BEGIN EXCLUSIVE), PostgreSQL's
// connections terminated and every table locked.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { createPool } from '../src/store/pg/client.js';
import { isPostgresUrl } from './store-under-test.js';

/** Holds the database's write lock (and, on PostgreSQL, cuts the server's connections) until released. */
export async function stall(db: string): Promise<() => Promise<void>> {
  if (!isPostgresUrl(db)) {
    // Another process: SQLite's wait for a lock another connection of the same process holds is not the same.
    const holder = spawn(
      process.execPath,
      ['-e', `const D=require('better-sqlite3');const d=new D(process.argv[1]);d.exec('BEGIN EXCLUSIVE');console.log('held');process.stdin.resume().on('end',()=>{d.exec('ROLLBACK');d.close()})`, db],
      { stdio: ['pipe', 'pipe', 'inherit'], cwd: process.cwd() },
    );
    await new Promise<void>((resolve, reject) => {
      createInterface({ input: holder.stdout! }).once('line', () => resolve());
      holder.once('exit', (code) => reject(new Error(`the lock holder exited (${code})`)));
    });
    return async () => {
      const exited = new Promise((resolve) => holder.once('exit', resolve));
      holder.stdin!.end();
      await exited;
    };
  }
  const sql = createPool(db, { max: 1, connectTimeout: 5 });
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let locked!: () => void;
  const lockedNow = new Promise<void>((resolve) => (locked = resolve));
  const held = sql.begin(async (tx) => {
    await tx.unsafe('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
    const tables = await tx<{ name: string }[]>`
      SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`;
    await tx.unsafe(`LOCK TABLE ${tables.map((t) => `"${t.name}"`).join(', ')} IN ACCESS EXCLUSIVE MODE`);
    locked();
    await released;
  });
  await Promise.race([lockedNow, held]);
  return async () => {
    release();
    await held;
    await sql.end();
  };
}
