// docs/api.md's route list, from the route docs (src/serve/rest/docs.ts):
// routes grouped by what serves them, with what a group's routes share (a
// first sentence, parameters) stated once above them and, per route, only
// what differs. Routes that differ only by their last path segment (the OTLP
// signals) are one entry.
import { ROUTE_DOCS, type RouteDoc } from '../../src/serve/rest/docs.js';

/** A parameter used by at least this many routes of a group is described once, above them. */
const SHARED_AT = 3;

const GROUPS: { title: string; has: (path: string) => boolean }[] = [
  { title: 'Ingest and REST', has: (path) => path.startsWith('/v1/') },
  { title: 'The web UI', has: (path) => path === '/' || path.startsWith('/sessions') || path.startsWith('/breaks/') || path.startsWith('/ui/') || path === '/alerts' },
  { title: 'Grafana: simPod JSON datasource', has: (path) => path.startsWith('/grafana/json') },
  { title: 'Grafana: Infinity datasource', has: (path) => path.startsWith('/grafana/') },
  { title: 'Operations', has: () => true },
];

interface Entry {
  routes: string[];
  summary: string;
  params: Record<string, string>;
}

const lastSegment = (path: string) => path.slice(path.lastIndexOf('/') + 1);

/** Routes whose summaries are the same but for their own last path segment become one entry. */
function merge(routes: RouteDoc[]): Entry[] {
  const entries = new Map<string, Entry & { segments: string[] }>();
  for (const route of routes) {
    const segment = lastSegment(route.path);
    const key = `${route.method} ${route.path.slice(0, -segment.length)} ${segment ? route.summary.replaceAll(segment, '\0') : route.summary} ${JSON.stringify(route.params ?? {})}`;
    const entry = entries.get(key);
    if (entry) {
      entry.routes.push(`${route.method} ${route.path}`);
      entry.segments.push(segment);
    } else {
      entries.set(key, { routes: [`${route.method} ${route.path}`], summary: route.summary, params: route.params ?? {}, segments: [segment] });
    }
  }
  return [...entries.values()].map(({ routes: merged, summary, params, segments }) => ({
    routes: merged,
    summary: segments.length > 1 ? summary.replaceAll(segments[0]!, segments.join(' / ')) : summary,
    params,
  }));
}

const firstSentence = (summary: string) => /^[^]*?\.(?= )/.exec(summary)?.[0];

function group(title: string, routes: RouteDoc[]): string {
  const entries = merge(routes);
  const lines = [`## ${title}`, ''];
  // A first sentence every route of the group starts with.
  const lead = entries.length > 1 ? firstSentence(entries[0]!.summary) : undefined;
  const sharedLead = lead !== undefined && entries.every((e) => e.summary.startsWith(`${lead} `)) ? lead : undefined;
  if (sharedLead) lines.push(`Every route below: ${sharedLead}`, '');
  // The most used text of each parameter, when enough routes use it.
  const uses = new Map<string, Map<string, number>>();
  for (const e of entries) {
    for (const [name, text] of Object.entries(e.params)) {
      const texts = uses.get(name) ?? new Map<string, number>();
      texts.set(text, (texts.get(text) ?? 0) + 1);
      uses.set(name, texts);
    }
  }
  const shared = new Map<string, string>();
  for (const [name, texts] of uses) {
    const [text, count] = [...texts].sort((a, b) => b[1] - a[1])[0]!;
    if (count >= SHARED_AT) shared.set(name, text);
  }
  if (shared.size > 0) {
    // A tail (after the first ": ") that several shared parameters end with is said once after them.
    const tails = new Map<string, string[]>();
    for (const [name, text] of shared) {
      const tail = text.includes(': ') ? text.slice(text.indexOf(': ') + 2) : '';
      if (tail) tails.set(tail, [...(tails.get(tail) ?? []), name]);
    }
    const commonTails = [...tails].filter(([, names]) => names.length >= SHARED_AT);
    lines.push('Parameters, where a route below lists them:', '');
    for (const [name, text] of shared) {
      const tail = commonTails.find(([, names]) => names.includes(name))?.[0];
      lines.push(`- \`${name}\`: ${tail ? text.slice(0, -tail.length - 2) : text}`);
    }
    lines.push('');
    for (const [tail, names] of commonTails) {
      lines.push(`Each of ${names.map((n) => `\`${n}\``).join(', ')} accepts: ${tail}.`, '');
    }
  }
  for (const e of entries) {
    const summary = sharedLead ? e.summary.slice(sharedLead.length + 1) : e.summary;
    lines.push(`- ${e.routes.map((r) => `\`${r}\``).join(', ')} — ${summary}`);
    const params = Object.entries(e.params);
    const common = params.filter(([name, text]) => shared.get(name) === text).map(([name]) => `\`${name}\``);
    if (common.length > 0) lines.push(`  - takes ${common.join(', ')}`);
    for (const [name, text] of params) if (shared.get(name) !== text) lines.push(`  - \`${name}\`: ${text}`);
  }
  return lines.join('\n');
}

export function apiReference(): string {
  // In the order of the routes' first appearance.
  const grouped = new Map<string, RouteDoc[]>();
  for (const route of ROUTE_DOCS) {
    const title = GROUPS.find((g) => g.has(route.path))!.title;
    grouped.set(title, [...(grouped.get(title) ?? []), route]);
  }
  return [...grouped].map(([title, routes]) => group(title, routes)).join('\n\n');
}
