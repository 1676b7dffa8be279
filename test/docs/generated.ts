// The generated sections of docs/: the configuration table from the option
// table, the decision tables from the rules, the API reference from the route
// docs, the library reference from its sources, the performance figures from
// bench-results.json. `npm run docs`
// rewrites them (`npm run bench` too); readme.test.ts fails when they are stale.
import { readFileSync } from 'node:fs';
import { optionsTable } from '../../src/config.js';
import { AUTOMATIC_CACHING, BREAKPOINTS } from '../../src/core/caching.js';
import { CAUSE_RULES, DETAIL_RULES, REASON_RULES, STATE_RULES, TTL_SOURCE_RULES } from '../../src/core/rules.js';
import { BREAK_REASONS } from '../../src/core/types.js';
import { USAGE_FIELDS } from '../../src/core/usage.js';
import { markdownTable, type Results } from '../bench/lib.js';
import { apiReference } from './api-reference.js';
import { libraryReference } from './library-reference.js';

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

/** The turn states, break reasons and causes, from src/core/rules.ts. */
function rules(): string {
  return [
    '| state (first that applies) | when |',
    '| --- | --- |',
    ...STATE_RULES.map(([state, text]) => `| \`${state}\` | ${text} |`),
    '',
    '| reason, in prefix order (marker reasons last) | change | position |',
    '| --- | --- | --- |',
    ...BREAK_REASONS.map((reason) => `| \`${reason}\` | ${REASON_RULES[reason].change} | ${REASON_RULES[reason].position} |`),
    '',
    '`cause` (for `likely_provider_ttl_or_eviction`, and for `unknown` when the gap alone says expiry):',
    '',
    ...Object.entries(CAUSE_RULES).map(([cause, text]) => `- \`${cause}\`: ${text}.`),
    '',
    '`ttlSource`: ' + Object.entries(TTL_SOURCE_RULES).map(([source, text]) => `\`${source}\` (${text})`).join(', ') + '.',
    '',
    ...DETAIL_RULES.map(([name, text]) => `**${name}** ${text}.`).flatMap((line) => [line, '']).slice(0, -1),
  ].join('\n');
}

/** The usage fields per provider, automatic caching and breakpoints, from src/core/usage.ts and src/core/caching.ts. */
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
    ...[...new Set(Object.values(AUTOMATIC_CACHING))].map((c) => `| ${c.label} | ${c.minimum} | ${c.retention} |`),
    '',
    '| explicit breakpoints | lookback | retention |',
    '| --- | --- | --- |',
    ...BREAKPOINTS.map((b) => `| ${b.label} | ${b.lookback} | ${b.retention} |`),
  ].join('\n');
}

/** Each file with generated sections, and what generates each section. */
export const GENERATED: Record<string, Record<string, () => string>> = {
  'docs/configuration.md': { configuration: optionsTable },
  'docs/how-it-decides.md': { rules, providers },
  'docs/api.md': { api: apiReference },
  'docs/library-api.md': { library: libraryReference },
  'docs/performance.md': { performance },
};

export const fileUrl = (file: string) => new URL(`../../${file}`, import.meta.url);

/** The file's text with each of its generated sections written anew. */
export function render(file: string, text: string): string {
  let out = text;
  for (const [name, generate] of Object.entries(GENERATED[file]!)) {
    const pattern = new RegExp(`(<!-- generated:${name} -->\\n)[\\s\\S]*?(<!-- /generated:${name} -->)`);
    if (!pattern.test(out)) throw new Error(`${file} has no generated:${name} markers`);
    out = out.replace(pattern, (_, start: string, end: string) => `${start}${generate()}\n${end}`);
  }
  return out;
}
