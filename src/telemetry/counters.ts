// In-process counters of what cachebreak observed, with every metric name
// declared once. They only ever grow (a turn is counted when it first gets a
// state, a break when it is first detected), so Prometheus rate() and
// increase() hold; exact, corrected figures are in /v1/stats. Label values
// come from bounded sets: never session or request ids.

export const COUNTERS = {
  tokens: {
    name: 'cachebreak_tokens_total',
    help: 'Input and output tokens by kind (uncached_input, cache_read, cache_write, output)',
  },
  turns: { name: 'cachebreak_turns_total', help: 'Turns with usage, by the cache state they were first given' },
  breaks: { name: 'cachebreak_breaks_total', help: 'Prompt cache breaks, by reason' },
  missed: { name: 'cachebreak_missed_cache_read_tokens_total', help: 'Cache-read tokens lost to breaks' },
  cost: {
    name: 'cachebreak_estimated_extra_cost_usd_total',
    help: 'Estimated extra cost of breaks in USD (models with a known price; the others are counted by cachebreak_breaks_unpriced_total)',
  },
  unpriced: {
    name: 'cachebreak_breaks_unpriced_total',
    help: 'Prompt cache breaks of models with no known price, by reason: an unknown cost, not $0',
    // A subset of breaks: each of their series is exposed here too, at 0 until
    // an unpriced break counts, so that increase() sees the first one.
    zeroWith: 'breaks',
  },
  events: {
    name: 'cachebreak_events_total',
    help: 'Events received, by receiver and outcome (accepted, duplicate, rejected)',
  },
  bodiesTruncated: {
    name: 'cachebreak_bodies_truncated_total',
    help: 'Request bodies that arrived cut (a harness content length limit) and gave partial snapshots, by project',
  },
  otlpIgnored: {
    name: 'cachebreak_otlp_records_ignored_total',
    help: 'OTLP records accepted but not used, by signal (logs, traces, metrics) and reason',
  },
} as const;

export type CounterName = keyof typeof COUNTERS;

export interface Sample {
  name: CounterName;
  labels: Record<string, string>;
  value: number;
}

/** A family always passes its labels in the same order, so their values make the key. */
function keyOf(name: CounterName, labels: Record<string, string>): string {
  let key: string = name;
  for (const label in labels) key += '\u0000' + labels[label];
  return key;
}

export class Counters {
  private readonly values = new Map<string, Sample>();

  inc(name: CounterName, labels: Record<string, string>, by = 1): void {
    if (by === 0) return;
    const key = keyOf(name, labels);
    const entry = this.values.get(key);
    if (entry) entry.value += by;
    else this.values.set(key, { name, labels, value: by });
  }

  get(name: CounterName, labels: Record<string, string>): number {
    return this.values.get(keyOf(name, labels))?.value ?? 0;
  }

  samples(): Sample[] {
    return [...this.values.values()];
  }
}
