// The README's generated sections: the configuration table from the option
// table, the API reference from the route docs, the performance figures from
// bench-results.json. `npm run docs` rewrites them (`npm run bench` too);
// readme.test.ts fails when they are stale.
import { readFileSync } from 'node:fs';
import { optionsTable } from '../../src/config.js';
import { AUTOMATIC_CACHING } from '../../src/core/caching.js';
import { CAUSE_RULES, REASON_RULES, STATE_RULES, TTL_SOURCE_RULES } from '../../src/core/rules.js';
import { BREAK_REASONS } from '../../src/core/types.js';
import { USAGE_FIELDS } from '../../src/core/usage.js';
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

/** SPEC §4's states, reasons and causes, from src/core/rules.ts. */
function rules(): string {
  return [
    '| state (first that applies) | when |',
    '| --- | --- |',
    ...STATE_RULES.map(([state, text]) => `| \`${state}\` | ${text} |`),
    '',
    '| reason, in prefix order | change | position |',
    '| --- | --- | --- |',
    ...BREAK_REASONS.map((reason) => `| \`${reason}\` | ${REASON_RULES[reason].change} | ${REASON_RULES[reason].position} |`),
    '',
    '`cause` (for `likely_provider_ttl_or_eviction`, and for `unknown` when the gap alone says expiry):',
    '',
    ...Object.entries(CAUSE_RULES).map(([cause, text]) => `- \`${cause}\`: ${text}.`),
    '',
    '`ttlSource`: ' + Object.entries(TTL_SOURCE_RULES).map(([source, text]) => `\`${source}\` (${text})`).join(', ') + '.',
  ].join('\n');
}

/** SPEC §3's usage fields and §4.3's automatic caching, from src/core/usage.ts and src/core/caching.ts. */
function providers(): string {
  return [
    '| usage of | input total | includes cache? | read | write |',
    '| --- | --- | --- | --- | --- |',
    ...Object.values(USAGE_FIELDS).map(
      (f) => `| ${f.providers} | ${f.total} | ${f.includesCache ? 'yes' : 'no'} | ${f.read} | ${f.write ?? '— (automatic caching)'} |`,
    ),
    '',
    '| automatic caching | cached from | retention |',
    '| --- | --- | --- |',
    ...[...new Set(Object.values(AUTOMATIC_CACHING))].map((c) => {
      const minimums = [...new Set(['gpt-4o', 'gemini-2.5-flash', 'gemini-2.5-pro'].map((family) => c.minTokens(family)))];
      const from = minimums.length === 1 ? `${minimums[0]!.toLocaleString('en-US')} tokens` : `${minimums.map((m) => m.toLocaleString('en-US')).join(' or ')} tokens (Pro models)`;
      return `| ${c.label} | ${from} | ${c.retention} |`;
    }),
  ].join('\n');
}

export const SECTIONS: Record<string, () => string> = {
  configuration: optionsTable,
  rules,
  providers,
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
