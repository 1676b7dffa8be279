// Runs a dashboard's Infinity targets the way Grafana would: macros and
// variables interpolated into the URL, the GET answered by the app itself.
type Json = Record<string, any>;

export const INFINITY_TYPE = 'yesoreyeram-infinity-datasource';

export interface InfinityUse {
  where: string;
  target: Json;
}

/** Panel targets, annotation targets and variable queries that go to Infinity. */
export function infinityTargets(dashboard: Json): InfinityUse[] {
  const uses: InfinityUse[] = [];
  const panels = (dashboard.panels ?? []).flatMap((p: Json) => [p, ...(p.panels ?? [])]);
  for (const panel of panels) {
    for (const target of panel.targets ?? []) {
      if ((target.datasource ?? panel.datasource)?.type === INFINITY_TYPE) uses.push({ where: `panel "${panel.title}" ${target.refId}`, target });
    }
  }
  for (const annotation of dashboard.annotations?.list ?? []) {
    if (annotation.datasource?.type === INFINITY_TYPE) uses.push({ where: `annotation "${annotation.name}"`, target: annotation.target });
  }
  for (const variable of dashboard.templating?.list ?? []) {
    if (variable.datasource?.type === INFINITY_TYPE) uses.push({ where: `variable "${variable.name}"`, target: variable.query.infinityQuery });
  }
  return uses;
}

/** Grafana's encodeURIComponentStrict, which its percentencode format uses. */
function percentEncode(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

export interface Interpolation {
  from: number;
  to: number;
  intervalMs: number;
  /** A variable's value: one, several (a multi-value selection), or its allValue. */
  variables: Record<string, string | string[]>;
}

/** The URL as Grafana sends it: ${__timeFrom} etc. as epoch ms, ${var:percentencode} as Grafana formats it. */
export function interpolate(url: string, at: Interpolation): string {
  return url.replace(/\$\{([A-Za-z_]\w*)(?::(\w+))?\}/g, (match, name: string, format: string | undefined) => {
    if (name === '__timeFrom') return String(at.from);
    if (name === '__timeTo') return String(at.to);
    if (name === '__interval_ms') return String(at.intervalMs);
    const value = at.variables[name];
    if (value === undefined) throw new Error(`no value for ${match}`);
    const text = Array.isArray(value) ? (value.length === 1 ? value[0]! : `{${value.join(',')}}`) : value;
    if (format === 'percentencode') return percentEncode(text);
    if (format === undefined) return text;
    throw new Error(`format ${format} of ${match} is not modelled here`);
  });
}

/** Problems with rows against the target's declared columns; empty when every row has each with its type. */
export function columnProblems(rows: unknown, columns: { selector: string; type: string }[]): string[] {
  if (!Array.isArray(rows)) return [`not an array: ${JSON.stringify(rows).slice(0, 200)}`];
  if (rows.length === 0) return ['no rows'];
  const problems: string[] = [];
  for (const [i, row] of rows.entries()) {
    for (const { selector, type } of columns) {
      const value = (row as Json)[selector];
      const ok =
        type === 'timestamp_epoch'
          ? Number.isSafeInteger(value) && value > 1e12
          : type === 'number'
            ? value === null || (typeof value === 'number' && Number.isFinite(value))
            : type === 'string'
              ? typeof value === 'string'
              : false;
      if (!ok) problems.push(`row ${i}: ${selector} = ${JSON.stringify(value)} is not a ${type}`);
    }
    if (problems.length > 5) break;
  }
  return problems;
}
