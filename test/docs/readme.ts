// The README's generated sections: the configuration table from the option
// table, the API reference from the route docs. `npm run docs` rewrites them;
// readme.test.ts fails when they are stale.
import { optionsTable } from '../../src/config.js';
import { ROUTE_DOCS } from '../../src/serve/rest/docs.js';

export const README = new URL('../../README.md', import.meta.url);

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
