// In-process counters of what cachebreak observed, with every metric name
// declared once. They only ever grow (a turn is counted when it first gets a
// state, a break when it is first detected), so Prometheus rate() and
// increase() hold; exact, corrected figures are in /v1/stats. Label values
// come from bounded sets: never session or request ids; model and provider,
// which clients choose, only for the most used models of each project
// (top-models.ts), the others counted as "other".
import { OTHER, pairOf, TopModels } from './top-models.js';

/** Models (model and provider pairs) per project with series of their own, by default. */
export const DEFAULT_METRIC_MODELS = 50;

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
  waitingEvicted: {
    name: 'cachebreak_waiting_evicted_total',
    help: 'Halves of an OTLP join (such as a Claude Code request body waiting for its request id) dropped before their partner came, by table and reason: bytes (over --max-waiting-bytes) or entries (over 10,000 in one table)',
  },
  proxyRequests: {
    name: 'cachebreak_proxy_requests_total',
    help: 'Requests through the provider proxy, by provider and outcome (forwarded, upstream_unreachable, upstream_reset, client_closed, client_stalled, refused, unknown_path, bad_path)',
  },
  proxyObservations: {
    name: 'cachebreak_proxy_observations_total',
    help: 'Model calls the proxy forwarded, by what was stored (turn, snapshot_only: no usage in the response) or why nothing was (upstream_status, unreadable, over_budget: the request bodies held reached --inflight-limit, rejected: the store refused the turn, such as a request id of another session, store_failed, queue_full: the database was not keeping up, shutdown: still queued when the server stopped)',
  },
  alertWebhookFailures: {
    name: 'cachebreak_alert_webhook_failures_total',
    help: 'Alert notifications (firing or resolved) the --alert-webhook URL did not take, by project and reason: timeout, unreachable, status (not 2xx) after every attempt, or queue_full (dropped unsent)',
  },
} as const;

export type CounterName = keyof typeof COUNTERS;

/** The `kind` label of cachebreak_tokens_total, in TokenTotals order (uncached, read, write, output). */
export const TOKEN_KINDS = ['uncached_input', 'cache_read', 'cache_write', 'output'] as const;

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
  private readonly models: TopModels;

  constructor(maxModels = DEFAULT_METRIC_MODELS) {
    this.models = new TopModels(maxModels);
  }

  inc(name: CounterName, labels: Record<string, string>, by = 1): void {
    if (by === 0) return;
    const { project, model, provider } = labels;
    if (project !== undefined && model !== undefined && provider !== undefined) {
      const placed = this.models.place(project, pairOf(model, provider), name === 'turns' ? by : 0);
      if (placed.demoted !== undefined) this.fold(project, placed.demoted);
      if (!placed.kept) labels = { ...labels, model: OTHER, provider: OTHER };
    }
    this.add(name, labels, by);
  }

  /** Exposes a series at 0 until it counts, so that increase() sees its first count. */
  expose(name: CounterName, labels: Record<string, string>): void {
    if (!this.values.has(keyOf(name, labels))) this.add(name, labels, 0);
  }

  private add(name: CounterName, labels: Record<string, string>, by: number): void {
    const key = keyOf(name, labels);
    const entry = this.values.get(key);
    if (entry) entry.value += by;
    else this.values.set(key, { name, labels, value: by });
  }

  /** Moves every series of a demoted model into "other": its counts stay in the totals. */
  private fold(project: string, pair: string): void {
    const folded = [...this.values].filter(([, { labels }]) => labels.project === project && labels.model !== undefined && labels.provider !== undefined && pairOf(labels.model, labels.provider) === pair);
    for (const [key, sample] of folded) {
      this.values.delete(key);
      this.add(sample.name, { ...sample.labels, model: OTHER, provider: OTHER }, sample.value);
    }
  }

  get(name: CounterName, labels: Record<string, string>): number {
    return this.values.get(keyOf(name, labels))?.value ?? 0;
  }

  samples(): Sample[] {
    return [...this.values.values()];
  }
}
