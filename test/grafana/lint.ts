// The checks a dashboard must pass beyond its types (research/grafana.md §6):
// datasources that the provisioning defines, variables that are defined or
// are Grafana's own, unique panel ids and refIds.
import { readFileSync } from 'node:fs';

type Json = Record<string, any>;

/** Grafana's and Infinity's built-in variables and macros, and data-link field references. */
const MACROS = new Set([
  '__timeFrom',
  '__timeTo',
  '__from',
  '__to',
  '__interval',
  '__interval_ms',
  '__rate_interval',
  '__range',
  '__range_s',
  '__range_ms',
  '__url_time_range',
  '__field',
  '__value',
  '__series',
  '__data',
  '__dashboard',
  '__org',
  '__user',
]);

/** uid → type of every datasource the provisioning file defines (comments skipped). */
export function provisionedDatasources(path: URL): Map<string, string> {
  const out = new Map<string, string>();
  const text = readFileSync(path, 'utf8');
  const lines = text.split('\n').filter((line) => !line.trim().startsWith('#'));
  let type: string | undefined;
  for (const line of lines) {
    const field = /^\s*(?:- )?(type|uid|name):\s*(\S+)\s*$/.exec(line);
    if (!field) continue;
    if (field[1] === 'name') type = undefined;
    if (field[1] === 'type') type = field[2];
    if (field[1] === 'uid' && type) out.set(field[2]!, type);
  }
  return out;
}

/** Every object in a JSON tree, with the path to it. */
export function* objects(value: unknown, path = '$'): Generator<[Json, string]> {
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) yield* objects(item, `${path}[${i}]`);
  } else if (typeof value === 'object' && value !== null) {
    yield [value as Json, path];
    for (const [key, item] of Object.entries(value)) yield* objects(item, `${path}.${key}`);
  }
}

/** Every string in a JSON tree, with the path to it. */
export function* strings(value: unknown, path = '$'): Generator<[string, string]> {
  if (typeof value === 'string') yield [value, path];
  else if (Array.isArray(value)) for (const [i, item] of value.entries()) yield* strings(item, `${path}[${i}]`);
  else if (typeof value === 'object' && value !== null) for (const [key, item] of Object.entries(value)) yield* strings(item, `${path}.${key}`);
}

const REFERENCE = /\$\{([A-Za-z_]\w*)(?:[.:][^}]*)?\}|\$([A-Za-z_]\w*)|\[\[([A-Za-z_]\w*)(?::[^\]]*)?\]\]/g;

export function lint(dashboard: Json, datasources: Map<string, string>): string[] {
  const problems: string[] = [];
  for (const [object, path] of objects(dashboard)) {
    const ds = object.datasource;
    if (ds && typeof ds === 'object' && 'uid' in ds) {
      if (!datasources.has(ds.uid)) problems.push(`${path}.datasource: uid "${ds.uid}" is not provisioned`);
      else if (datasources.get(ds.uid) !== ds.type) problems.push(`${path}.datasource: uid "${ds.uid}" is a ${datasources.get(ds.uid)}, not ${ds.type}`);
    }
  }
  const variables = new Set<string>((dashboard.templating?.list ?? []).map((v: Json) => v.name));
  for (const [text, path] of strings(dashboard)) {
    for (const match of text.matchAll(REFERENCE)) {
      const name = match[1] ?? match[2] ?? match[3]!;
      if (!variables.has(name) && !MACROS.has(name)) problems.push(`${path}: "${match[0]}" is neither a variable of this dashboard nor a Grafana macro`);
    }
  }
  const ids = new Set<number>();
  const panels = (dashboard.panels ?? []).flatMap((p: Json) => [p, ...(p.panels ?? [])]);
  for (const panel of panels) {
    if (typeof panel.id !== 'number') problems.push(`panel "${panel.title}" has no id`);
    else if (ids.has(panel.id)) problems.push(`panel id ${panel.id} is used twice`);
    ids.add(panel.id);
    const refIds = (panel.targets ?? []).map((t: Json) => t.refId);
    if (new Set(refIds).size !== refIds.length || refIds.some((r: unknown) => typeof r !== 'string')) {
      problems.push(`panel "${panel.title}": refIds ${JSON.stringify(refIds)} are not unique strings`);
    }
  }
  return problems;
}
