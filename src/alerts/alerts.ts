// The server's regression alerts: every project's rules evaluated on a timer
// from the store's rollup sums (never on the ingest path), each alert firing
// until its rule stops finding it, then resolved. The state is this process's
// memory: each server of a shared database evaluates on its own
// (docs/scaling.md), and a restart starts with none firing.
import { storedIso } from '../time.js';
import type { Store } from '../store/store.js';
import type { Logger } from '../telemetry/logfmt.js';
import { versionWhereChangeBegan } from './versions.js';
import { evaluate, NEW_REASON_LOOKBACK_MS, subjectOf, type AlertRules, type Condition, type RuleName } from './rules.js';

export interface Alert {
  project: string;
  rule: RuleName;
  /** The break reason (and cause) of a new_break_reason alert; null for the others. */
  subject: string | null;
  state: 'firing' | 'resolved';
  startedMs: number;
  resolvedMs: number | null;
  /** The rule's figure at the last evaluation while firing. */
  value: number;
  threshold: number | null;
  windowMs: number;
  /** The agent version where the change began (versions.ts), found when it fired; null when its breaks name none. */
  agentVersion: string | null;
}

/** An alert as GET /v1/alerts and the webhook send it: times in RFC 3339, and one line saying what it is. */
export function wireAlert(alert: Alert) {
  const { startedMs, resolvedMs, ...rest } = alert;
  return { ...rest, startedAt: storedIso(startedMs), resolvedAt: resolvedMs === null ? null : storedIso(resolvedMs), summary: summaryOf(alert) };
}

export function windowText(ms: number): string {
  for (const [unit, size] of [['d', 86_400_000], ['h', 3_600_000], ['m', 60_000], ['s', 1000]] as const) {
    if (ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}

function summaryOf(alert: Alert): string {
  const window = windowText(alert.windowMs);
  switch (alert.rule) {
    case 'cache_rate_below':
      return `project ${alert.project}: cache rate ${(alert.value * 100).toFixed(1)}% over the last ${window}, below ${((alert.threshold ?? 0) * 100).toFixed(1)}%`;
    case 'extra_cost_above':
      return `project ${alert.project}: breaks cost an estimated $${alert.value.toFixed(2)} extra per hour over the last ${window}, above $${(alert.threshold ?? 0).toFixed(2)}`;
    case 'new_break_reason':
      return `project ${alert.project}: ${alert.value} break(s) of a new reason, ${alert.subject}, in the last ${window}`;
  }
}

/** Projects one evaluation looks at, at most: the work of a run is bounded. */
export const MAX_PROJECTS = 1000;
/** Resolved alerts kept for GET /v1/alerts, of every project together; the oldest go first. */
export const RECENT_RESOLVED = 200;

export interface AlertDeps {
  store: Store;
  rules: AlertRules;
  /** The projects to evaluate (those with stored turns). */
  projects: () => string[];
  now: () => number;
  log: Logger;
  /** Hears of each alert as it fires and as it resolves. */
  notify?: (alert: Alert) => void;
}

export class Alerts {
  private readonly firing = new Map<string, Alert>();
  private readonly resolved: Alert[] = [];
  /** Per project, the break subjects known before `until`: read over the lookback once, then only what each run adds. */
  private readonly known = new Map<string, { until: number; subjects: Set<string> }>();
  /** The run in progress, if any. */
  private running: Promise<void> | undefined;
  private stopped = false;
  /** The alerts of the run in progress that fired without their version: its breaks could not be read. */
  private versionUnread: { failed: number; first?: { project: string; rule: RuleName; message: string } } = { failed: 0 };
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly deps: AlertDeps) {}

  get rules(): AlertRules {
    return this.deps.rules;
  }

  /** Evaluates now and then every `everyMs`, one run at a time. */
  start(everyMs: number): void {
    void this.run();
    this.timer = setInterval(() => void this.run(), everyMs);
    this.timer.unref();
  }

  /** No run starts any more, the one in progress stops at its next project; resolves when it has (before the store closes). */
  stop(): Promise<void> {
    clearInterval(this.timer);
    this.stopped = true;
    return this.running ?? Promise.resolve();
  }

  /** The project's firing alerts (newest first), then its resolved ones (last resolved first). */
  list(project: string): Alert[] {
    const firing = [...this.firing.values()].filter((alert) => alert.project === project).sort((a, b) => b.startedMs - a.startedMs);
    const resolved = this.resolved.filter((alert) => alert.project === project).reverse();
    return [...firing, ...resolved];
  }

  /** One evaluation of every project; a project whose sums cannot be read keeps its alerts as they were. */
  run(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    this.running ??= this.evaluateAll().finally(() => (this.running = undefined));
    return this.running;
  }

  private async evaluateAll(): Promise<void> {
    const projects = this.deps.projects();
    if (projects.length > MAX_PROJECTS) this.deps.log.warn('alerts_projects_skipped', { evaluated: MAX_PROJECTS, skipped: projects.length - MAX_PROJECTS });
    let failed = 0;
    let first: { project: string; message: string } | undefined;
    this.versionUnread = { failed: 0 };
    for (const project of projects.slice(0, MAX_PROJECTS)) {
      if (this.stopped) return;
      try {
        await this.apply(project, await this.conditionsOf(project), this.deps.now());
      } catch (error) {
        failed++;
        first ??= { project, message: (error as Error).message };
      }
    }
    // One line per run, not per project: a database that is away fails them all.
    if (first) this.deps.log.error('alerts_evaluation_failed', { projects: failed, ...first });
    const unread = this.versionUnread;
    if (unread.first) this.deps.log.warn('alerts_version_unread', { alerts: unread.failed, ...unread.first });
  }

  private async conditionsOf(project: string): Promise<Condition[]> {
    const { store, rules } = this.deps;
    const to = this.deps.now();
    const from = to - rules.windowMs;
    const [window] = rules.cacheRateBelow !== undefined || rules.extraCostAbove !== undefined ? await store.totals(project, { from, to, filters: {} }) : [];
    if (!rules.newBreakReason) return evaluate(rules, { window });
    const known = this.known.get(project) ?? { until: from - NEW_REASON_LOOKBACK_MS, subjects: new Set<string>() };
    if (known.until < from) {
      for (const row of await store.breakCauses(project, { from: known.until, to: from }, {})) if (row.breaks > 0) known.subjects.add(subjectOf(row));
      known.until = from;
      this.known.set(project, known);
    }
    return evaluate(rules, { window, causes: { window: await store.breakCauses(project, { from, to }, {}), known: known.subjects } });
  }

  /**
   * The version where an alert's change began, from the breaks its condition
   * is about (a new reason's, or all of them); null when they cannot be read:
   * the alert fires all the same.
   */
  private async versionOf(project: string, condition: Condition, now: number): Promise<string | null> {
    const [reason, cause] = condition.subject?.split('/') ?? [];
    const filters = reason === undefined ? {} : { reason: [reason], cause: [cause ?? 'none'] };
    try {
      return await versionWhereChangeBegan(this.deps.store, project, now - this.deps.rules.windowMs, now, filters);
    } catch (error) {
      this.versionUnread.failed++;
      this.versionUnread.first ??= { project, rule: condition.rule, message: (error as Error).message };
      return null;
    }
  }

  private async apply(project: string, conditions: Condition[], now: number): Promise<void> {
    const keyOf = (rule: RuleName, subject: string | null) => `${project}\u0000${rule}\u0000${subject ?? ''}`;
    const current = new Map(conditions.map((condition) => [keyOf(condition.rule, condition.subject), condition]));
    for (const [key, condition] of current) {
      if (!condition.firing) continue;
      const alert = this.firing.get(key);
      if (alert) {
        alert.value = condition.value;
        continue;
      }
      const started: Alert = {
        project,
        rule: condition.rule,
        subject: condition.subject,
        state: 'firing',
        startedMs: now,
        resolvedMs: null,
        value: condition.value,
        threshold: condition.threshold,
        windowMs: this.deps.rules.windowMs,
        agentVersion: await this.versionOf(project, condition, now),
      };
      this.firing.set(key, started);
      this.deps.log.warn('alert_firing', { project, rule: started.rule, subject: started.subject, value: started.value });
      this.deps.notify?.(started);
    }
    for (const [key, alert] of this.firing) {
      if (alert.project !== project || current.get(key)?.firing) continue;
      this.firing.delete(key);
      // With the figure that resolved it, when the rule still has one.
      const resolved: Alert = { ...alert, state: 'resolved', resolvedMs: now, value: current.get(key)?.value ?? alert.value };
      this.resolved.push(resolved);
      if (this.resolved.length > RECENT_RESOLVED) this.resolved.shift();
      this.deps.log.info('alert_resolved', { project, rule: alert.rule, subject: alert.subject });
      this.deps.notify?.(resolved);
    }
  }
}
