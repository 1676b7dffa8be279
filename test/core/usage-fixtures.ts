// The provider usage fixtures (test/fixtures/usage/<provider>/*.json): a raw
// usage as the API returned it and the normalised usage it must give.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Usage } from '../../src/core/types.js';

export interface UsageFixture {
  description: string;
  provider: string;
  /** The provider's true total input, worked out by hand from its documentation. */
  totalInput: number;
  raw: unknown;
  expected: Usage;
}

const FIXTURE_DIR = join(import.meta.dirname, '../fixtures/usage');

/** Every fixture, by its path under test/fixtures/usage, in path order. */
export const USAGE_FIXTURES: [string, UsageFixture][] = readdirSync(FIXTURE_DIR, { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.json'))
  .sort()
  .map((file) => [file, JSON.parse(readFileSync(join(FIXTURE_DIR, file), 'utf8')) as UsageFixture]);
