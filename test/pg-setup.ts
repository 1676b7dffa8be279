// Global setup of the `postgres` test project: without a PostgreSQL server
// every test of the project fails at once with one clear message, rather than
// each timing out (or being skipped: the PostgreSQL store is part of what CI
// proves).
import { assertReachable } from './pg.js';

export default async function setup(): Promise<void> {
  await assertReachable();
}
