// In-process counters of what crosses cachebreak's boundaries, with every
// metric name declared once. Label values must come from bounded sets.

export const COUNTERS = {
  events: {
    name: 'cachebreak_events_total',
    help: 'Events received, by receiver and outcome (accepted, duplicate, rejected)',
  },
} as const;

export type CounterName = keyof typeof COUNTERS;

export class Counters {
  private readonly values = new Map<string, { name: CounterName; labels: Record<string, string>; value: number }>();

  inc(name: CounterName, labels: Record<string, string>, by = 1): void {
    if (by === 0) return;
    const key = name + JSON.stringify(labels);
    const entry = this.values.get(key);
    if (entry) entry.value += by;
    else this.values.set(key, { name, labels, value: by });
  }

  get(name: CounterName, labels: Record<string, string>): number {
    return this.values.get(name + JSON.stringify(labels))?.value ?? 0;
  }

  entries() {
    return [...this.values.values()];
  }
}
