// Token counters exported as metrics: each point adds only what is new. A
// delta point adds its value once; a cumulative point adds its growth since
// the series' last point (a new start time or a smaller value is a restart of
// the exporting process). Repeated or stale points add nothing.
import type Database from 'better-sqlite3';
import type { TokenPoint } from '../store.js';
import type { Dictionary } from './dictionary.js';

export class TokenPointWriter {
  private readonly statements;

  constructor(sqlite: Database.Database, private readonly dictionary: Dictionary) {
    this.statements = {
      series: sqlite.prepare<[number, string], SeriesState>(
        'SELECT start_ms, last_ms, last_value FROM token_series WHERE project_id = ? AND series = ?',
      ),
      putSeries: sqlite.prepare(
        `INSERT INTO token_series (project_id, series, start_ms, last_ms, last_value) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (project_id, series) DO UPDATE SET start_ms = excluded.start_ms, last_ms = excluded.last_ms,
           last_value = excluded.last_value`,
      ),
      add: sqlite.prepare(
        `INSERT INTO reported_tokens (project_id, minute, source, model_id, kind, tokens) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (project_id, minute, source, model_id, kind) DO UPDATE SET tokens = tokens + excluded.tokens`,
      ),
    };
  }

  /** Must run inside the caller's transaction. */
  write(projectId: number, points: readonly TokenPoint[]): void {
    for (const point of points) {
      const growth = this.growth(projectId, point);
      if (growth > 0) {
        this.statements.add.run(
          projectId, Math.floor(point.timeMs / 60_000), point.source, this.dictionary.label('model', point.model),
          point.kind, growth,
        );
      }
    }
  }

  private growth(projectId: number, point: TokenPoint): number {
    const growth = pointGrowth(point, this.statements.series.get(projectId, point.series));
    if (growth === undefined) return 0;
    this.statements.putSeries.run(projectId, point.series, point.startMs, point.timeMs, point.value);
    return growth;
  }
}

/** The series' last point as stored. */
export interface SeriesState {
  start_ms: number;
  last_ms: number;
  last_value: number;
}

/**
 * What a point adds after the series' last stored point; undefined when it
 * is a replay or stale (then the series is not moved to it either).
 */
export function pointGrowth(point: TokenPoint, last: SeriesState | undefined): number | undefined {
  // A delta window at or before the last one counted is a replay; a cumulative point is stale
  // only within the same start (a new start is a restarted exporter, counting from zero).
  const seen = point.temporality === 'delta' || point.startMs === last?.start_ms;
  if (last && seen && point.timeMs <= last.last_ms) return undefined;
  if (point.temporality === 'delta') return point.value;
  if (!last || point.startMs !== last.start_ms || point.value < last.last_value) return point.value;
  return point.value - last.last_value;
}
