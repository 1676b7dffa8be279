// The README's generated sections: the configuration table from the option
// table, the API reference from the route docs, the performance figures from
// bench-results.json. `npm run docs` rewrites them (`npm run bench` too);
// readme.test.ts fails when they are stale.
import { readFileSync } from 'node:fs';
import { optionsTable } from '../../src/config.js';
import { ROUTE_DOCS } from '../../src/serve/rest/docs.js';
import { markdownTable, type Results } from '../bench/lib.js';

export const README = new URL('../../README.md', import.meta.url);
const RESULTS = new URL('../../bench-results.json', import.meta.url);

function performance(): string {
  const r = JSON.parse(readFileSync(RESULTS, 'utf8')) as Results;
  const m = r.machine;
  const sizes = r.sizes.map((n) => `${(n / 1e6).toLocaleString('en-US')}M`).join(' and ');
  return [
    `Measured by \`npm run bench\` on ${r.date.slice(0, 10)}, commit \`${r.commit}\`: ${m.cpus} × ${m.cpuModel}, ${m.memoryGiB} GiB, Node ${m.node}; service figures at ${sizes} turns.`,
    '',
    markdownTable(r.rows),
  ].join('\n');
}

function apiReference(): string {
  return ROUTE_DOCS.map((route) => {
    const params = Object.entries(route.params ?? {})
      .map(([name, text]) => `  - \`${name}\`: ${text}`)
      .join('\n');
    return `- \`${route.method} ${route.path}\` — ${route.summary}${params ? `\n${params}` : ''}`;
  }).join('\n');
}

export const SECTIONS: Record<string, () => string> = {
  configuration: optionsTable,
  api: apiReference,
  performance,
};

export function render(readme: string): string {
  let out = readme;
  for (const [name, generate] of Object.entries(SECTIONS)) {
    const pattern = new RegExp(`(<!-- generated:${name} -->\\n)[\\s\\S]*?(<!-- /generated:${name} -->)`);
    if (!pattern.test(out)) throw new Error(`README.md has no generated:${name} markers`);
    out = out.replace(pattern, (_, start: string, end: string) => `${start}${generate()}\n${end}`);
  }
  return out;
}
