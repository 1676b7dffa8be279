// The library reference names every value the packages export, with a doc
// comment for each function and class: a new export cannot go undocumented.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as client from '../../src/client/index.js';
import * as detector from '../../src/detector/index.js';
import { fileUrl } from './generated.js';

describe('docs/library-api.md', () => {
  const text = readFileSync(fileUrl('docs/library-api.md'), 'utf8');
  const section = (name: string) => text.slice(text.indexOf(`## ${name}\n`), text.indexOf('\n## ', text.indexOf(`## ${name}\n`) + 1) >>> 0);

  it.each([
    ['cachebreak/detector', detector],
    ['cachebreak/client', client],
  ] as const)('%s: every exported value has an entry, each function and class a description', (name, module) => {
    const own = section(name);
    for (const [exported, value] of Object.entries(module)) {
      const at = own.indexOf(`### ${exported}\n`);
      expect(at, `${name}: ${exported}`).toBeGreaterThanOrEqual(0);
      if (typeof value !== 'function') continue;
      // Signature block, then a sentence.
      const entry = own.slice(at, own.indexOf('\n### ', at + 1) >>> 0);
      expect(entry, `${name}: ${exported}`).toMatch(/```\n\n[A-Z`]/);
    }
  });
});
