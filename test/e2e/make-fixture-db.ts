// Writes test/fixtures/db/v<version>.db: a database as a released cachebreak
// leaves it, for the migration test (migrations.test.ts) to start newer code on.
//
// How test/fixtures/db/v0.1.0.db was made (cachebreak 0.1.0 at commit 8fbb592,
// one migration, 0000_init), from a clean export of that commit so that no
// uncommitted change could leak into it:
//   git archive 8fbb592 | tar -x -C /tmp/v0.1.0 && cd /tmp/v0.1.0
//   (node_modules linked or installed; test/e2e/ copied in)
//   npx tsc -p tsconfig.build.json && npx tsx test/e2e/make-fixture-db.ts 0.1.0
//   cp test/fixtures/db/v0.1.0.db into this repository's test/fixtures/db/
// It runs the built server (`node dist/cli.js serve`) on a new file, POSTs
// realisticBatch() (the seed's Claude Code session and an OpenAI session,
// one break each), stops the server with SIGTERM, then folds the WAL into
// the main file and switches it to rollback-journal mode so that the
// fixture is one self-contained file, and VACUUMs it to keep it small.
// Never regenerate an existing version's file: it stands for what that
// release wrote. Add a new file for a new release instead.
import Database from 'better-sqlite3';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { realisticBatch } from './events.js';
import { postEvents, spawnServer } from './process.js';

const version = process.argv[2];
if (!version || !/^\d+\.\d+\.\d+$/.test(version)) {
  console.error('usage: npx tsx test/e2e/make-fixture-db.ts <version, e.g. 0.1.0>');
  process.exit(2);
}
const target = fileURLToPath(new URL(`../fixtures/db/v${version}.db`, import.meta.url));
if (existsSync(target)) {
  console.error(`${target} exists; fixtures of released versions are not regenerated`);
  process.exit(1);
}

const dir = mkdtempSync(join(tmpdir(), 'cachebreak-fixture-'));
try {
  const db = join(dir, 'x.db');
  const server = await spawnServer(db);
  const reply = await postEvents(server.url, realisticBatch());
  const exit = await server.stop('SIGTERM');
  if (reply.status !== 200 || exit.code !== 0) throw new Error(`ingest answered ${reply.status} ${reply.text}; exit ${JSON.stringify(exit)}`);

  const sqlite = new Database(db);
  sqlite.pragma('wal_checkpoint(TRUNCATE)');
  sqlite.pragma('journal_mode = DELETE');
  sqlite.exec('VACUUM');
  const integrity = sqlite.pragma('integrity_check', { simple: true });
  sqlite.close();
  if (integrity !== 'ok') throw new Error(`integrity_check: ${String(integrity)}`);

  mkdirSync(join(target, '..'), { recursive: true });
  copyFileSync(db, target);
  console.log(`${target}: ${statSync(target).size} bytes`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
