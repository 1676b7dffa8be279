import { configDefaults, defineConfig } from 'vitest/config';

/**
 * The tests whose subject is the store, directly or through a server: they
 * run against SQLite (project `sqlite`, with every other test) and against
 * PostgreSQL (project `postgres`), through the helpers of
 * test/store-under-test.ts.
 */
const STORE_TESTS = [
  'test/store/**/*.test.ts',
  'test/e2e/**/*.test.ts',
  // The reads of the API and of the Grafana endpoints, in-process.
  'test/serve/reads.test.ts',
  'test/serve/break-prefixes.test.ts',
  'test/serve/break-explorer.test.ts',
  'test/serve/fingerprints.test.ts',
  'test/serve/break-scan.test.ts',
  'test/serve/diagnosis-privacy.test.ts',
  'test/serve/external-breaks.test.ts',
  'test/grafana/endpoints.test.ts',
  'test/grafana/simpod.test.ts',
  'test/grafana/variable-body.test.ts',
  // API keys and projects: stored, shared by the servers of a database.
  'test/auth/access.test.ts',
  'test/auth/tenancy.test.ts',
  // Privacy: no content in any column of any table.
  'test/otlp/sources/privacy.test.ts',
  // Ingest through the store: what it refuses, the queue in front of it, limits, times, free-form fields.
  'test/ingest/store-rejections.test.ts',
  'test/ingest/queue.test.ts',
  'test/ingest/limits-paths.test.ts',
  'test/ingest/times.test.ts',
  'test/ingest/free-form.test.ts',
  // Alert rules evaluated over the store's rollups.
  'test/alerts/evaluation.test.ts',
  'test/alerts/versions.test.ts',
  // The proxy while its database is locked or gone.
  'test/proxy/stalled-store.test.ts',
];

/** Tests that need PostgreSQL whatever the project: they run once, in `postgres`. */
const POSTGRES_ONLY = ['test/multi-node/**/*.test.ts', 'test/store/pg-*.test.ts', 'test/e2e/postgres.test.ts', 'test/e2e/pg-*.test.ts', 'test/insights/postgres.test.ts'];

/** Store tests whose subject is SQLite itself, or nothing of the store: not run against PostgreSQL. */
const NOT_ON_POSTGRES: Record<string, string> = {
  'test/store/checkpointer.test.ts': "SQLite's WAL checkpointer thread",
  'test/store/write-thread.test.ts': "the SQLite store's write thread (PostgreSQL's writes wait on the network, not on the main thread)",
  'test/store/interned-prefixes.test.ts': "the SQLite store's in-memory prefix dictionary",
  'test/store/lock.test.ts': 'the lock file beside a SQLite database',
  'test/store/query-plans.test.ts': "SQLite's query plans (EXPLAIN QUERY PLAN); PostgreSQL's are test/store/pg-query-plans.test.ts",
  'test/store/schema-migrations.test.ts': 'drizzle-kit against the SQLite schema and migrations/',
  'test/store/gap-rollups.test.ts': "rebuilds gap rollups in SQLite's tables; PostgreSQL's are compared with SQLite's by pg-store.test.ts and test/insights/postgres.test.ts",
  'test/store/sqlite-upgrade.test.ts': 'a database file written by an earlier release (SQLite only)',
  'test/e2e/migrations.test.ts': "SQLite's migration journal, and a database file written by an earlier release",
  'test/e2e/read-only-db.test.ts': 'file permissions of a SQLite database',
  'test/e2e/deploy.test.ts': 'the compose files of deploy/, which run the server on a SQLite volume',
  'test/e2e/package.test.ts': 'the packed and installed package (npm pack, minutes of CPU); the store is not its subject',
  'test/e2e/prometheus-dashboard.test.ts': "PromQL of the Prometheus dashboard; the counters' stored totals are metrics-stored.test.ts's, run on both",
};

export default defineConfig({
  test: {
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    coverage: {
      provider: 'v8',
      include: ['src/**/*.ts'],
      reporter: ['text-summary', 'json-summary'],
      thresholds: {
        'src/core/**': { lines: 95 },
      },
    },
    projects: [
      {
        extends: true,
        test: {
          name: 'sqlite',
          include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...POSTGRES_ONLY],
        },
      },
      {
        extends: true,
        test: {
          name: 'postgres',
          include: [...STORE_TESTS, ...POSTGRES_ONLY],
          exclude: [...configDefaults.exclude, ...Object.keys(NOT_ON_POSTGRES)],
          env: { CACHEBREAK_TEST_STORE: 'postgres' },
          // A PostgreSQL write is a few round trips where SQLite's is a call:
          // the property tests' hundreds of small writes take several times longer.
          testTimeout: 120_000,
          // After the sqlite project, two files at a time (CI's two cores give
          // one by default): these tests wait on the database more than they
          // compute. Each keeps its pools small (test/store-under-test.ts): far
          // below the server's 100 connections.
          sequence: { groupOrder: 1 },
          maxWorkers: 2,
          globalSetup: ['test/pg-setup.ts'],
        },
      },
    ],
  },
});
