import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { USAGE_FIELDS } from '../../src/core/usage.js';
import { fileUrl, GENERATED, render } from './generated.js';
import { README } from './readme.js';

describe('docs', () => {
  it('has its configuration table and API reference generated from the code (run npm run docs)', () => {
    expect(Object.keys(GENERATED)).toEqual(expect.arrayContaining(['docs/configuration.md', 'docs/api.md', 'docs/library-api.md', 'docs/performance.md']));
    for (const file of Object.keys(GENERATED)) {
      const text = readFileSync(fileUrl(file), 'utf8');
      expect(text, file).toBe(render(file, text));
    }
  });
});

describe('README', () => {
  it('gives exactly two set-up commands, and the test command .ci/run calls', () => {
    const readme = readFileSync(README, 'utf8');
    const quickStart = readme.slice(readme.indexOf('## Quick start'), readme.indexOf('\n## ', readme.indexOf('## Quick start') + 1));
    const setup = [...quickStart.matchAll(/^npm ci && .+$/gm)].map((m) => m[0].replace(/\s+#.*$/, ''));
    expect(setup).toEqual(['npm ci && npm start', 'npm ci && npm test']);
    expect(readFileSync(new URL('../../.ci/run', import.meta.url), 'utf8')).toMatch(/^npm ci && npm test$/m);
  });
});

describe('usage table', () => {
  it('names only fields the usage normaliser reads', () => {
    const source = readFileSync(new URL('../../src/core/usage.ts', import.meta.url), 'utf8');
    // The code after the table itself.
    const code = source.slice(source.indexOf('/** The supported providers'));
    const named = Object.values(USAGE_FIELDS).flatMap((f) => [f.total, f.read, f.write ?? ''].flatMap((text) => [...text.matchAll(/`([^`]+)`/g)].map((m) => m[1]!)));
    expect(named.length).toBeGreaterThan(12);
    for (const field of named) {
      for (const key of field.split('.')) expect(code, `${field} (${key})`).toContain(`'${key}'`);
    }
  });
});
