// What every Grafana query returns before it is rendered: named, typed
// columns and rows. Infinity gets the rows as flat objects; the simPod
// datasource gets time series or a table. One query, two renderings.

export type ColumnType = 'time' | 'string' | 'number';
export type Cell = string | number | null;

export interface Column {
  name: string;
  type: ColumnType;
}

export interface Frame {
  /** series: a `ts` time column, string label columns and number value columns, one row per point. */
  kind: 'series' | 'table';
  columns: Column[];
  rows: Cell[][];
}

export function frame(kind: Frame['kind'], columns: [string, ColumnType][], rows: Cell[][]): Frame {
  return { kind, columns: columns.map(([name, type]) => ({ name, type })), rows };
}

/** Infinity: a flat JSON array of objects, times as epoch ms. */
export function toObjects(f: Frame): Record<string, Cell>[] {
  return f.rows.map((row) => {
    const object: Record<string, Cell> = {};
    f.columns.forEach((column, i) => (object[column.name] = row[i] ?? null));
    return object;
  });
}

export interface SimpodSeries {
  target: string;
  /** [value, epoch ms], value first. */
  datapoints: [number | null, number][];
}

export interface SimpodTable {
  type: 'table';
  columns: { text: string; type: ColumnType }[];
  rows: Cell[][];
}

/** simPod: one time series per label combination and value column, or one table. */
export function toSimpod(f: Frame): (SimpodSeries | SimpodTable)[] {
  if (f.kind === 'table') {
    return [{ type: 'table', columns: f.columns.map((c) => ({ text: c.name, type: c.type })), rows: f.rows }];
  }
  const time = f.columns.findIndex((c) => c.type === 'time');
  const labels = f.columns.flatMap((c, i) => (c.type === 'string' ? [i] : []));
  const values = f.columns.flatMap((c, i) => (c.type === 'number' ? [i] : []));
  const series = new Map<string, SimpodSeries>();
  for (const row of f.rows) {
    const label = labels.map((i) => String(row[i] ?? '')).join(' ');
    for (const i of values) {
      const column = f.columns[i]!.name;
      const target = values.length === 1 ? label || column : label ? `${label} ${column}` : column;
      let entry = series.get(target);
      if (!entry) series.set(target, (entry = { target, datapoints: [] }));
      entry.datapoints.push([row[i] as number | null, row[time] as number]);
    }
  }
  return [...series.values()];
}
