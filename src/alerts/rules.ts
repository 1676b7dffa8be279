// The regression rules a server evaluates per project (serve --alert-…), and
// what one evaluation of a project finds: pure, the store's sums in, the
// conditions out (alerts.ts keeps their state over time).
import type { BreakCauseRow, TotalsRow } from '../store/store.js';

export const RULES = ['cache_rate_below', 'extra_cost_above', 'new_break_reason'] as const;
export type RuleName = (typeof RULES)[number];

export interface AlertRules {
  /** Fire while the project's cache rate over the window is below this (0–1); undefined: off. */
  cacheRateBelow?: number | undefined;
  /** Fire while the project's breaks cost more than this many USD per hour over the window; undefined: off. */
  extraCostAbove?: number | undefined;
  /** Fire while a break reason and cause appear in the window that the project had not had before it (NEW_REASON_LOOKBACK_MS at first, then since). */
  newBreakReason?: boolean;
  /** The window each rule looks at, ending now. */
  windowMs: number;
  /** Turns in the window below which the cache rate says nothing and the rule waits. */
  minTurns: number;
}

/** How far back before the first window a server evaluates a break reason counts as known. */
export const NEW_REASON_LOOKBACK_MS = 30 * 86_400_000;

export function anyRule(rules: AlertRules): boolean {
  return rules.cacheRateBelow !== undefined || rules.extraCostAbove !== undefined || rules.newBreakReason === true;
}

/** One rule's finding for one project (and, for a new reason, one reason and cause). */
export interface Condition {
  rule: RuleName;
  /** What the rule found it about: "reason" or "reason/cause" for new_break_reason; null for the others. */
  subject: string | null;
  firing: boolean;
  /** The figure compared: a rate, USD per hour, or the breaks of the new reason. */
  value: number;
  threshold: number | null;
}

export interface ProjectFacts {
  /** Totals over the window (one row, or none when nothing is stored). */
  window: TotalsRow | undefined;
  /** Breaks by reason and cause over the window, and the subjects (subjectOf) known before it; undefined when the rule is off. */
  causes?: { window: BreakCauseRow[]; known: ReadonlySet<string> };
}

/** "reason", or "reason/cause" when the break has a cause. */
export const subjectOf = (row: BreakCauseRow) => (row.cause === null ? row.reason : `${row.reason}/${row.cause}`);

/**
 * The conditions of every rule that is on. A rule with nothing to judge (no
 * turns, too few) is not firing: an alert it raised before resolves.
 */
export function evaluate(rules: AlertRules, facts: ProjectFacts): Condition[] {
  const found: Condition[] = [];
  const window = facts.window;
  if (rules.cacheRateBelow !== undefined) {
    const rate = window?.cacheRate ?? null;
    const judged = rate !== null && (window?.turns ?? 0) >= rules.minTurns;
    found.push({ rule: 'cache_rate_below', subject: null, firing: judged && rate < rules.cacheRateBelow, value: rate ?? 0, threshold: rules.cacheRateBelow });
  }
  if (rules.extraCostAbove !== undefined) {
    const perHour = (window?.estimatedExtraCostUsd ?? 0) / (rules.windowMs / 3_600_000);
    found.push({ rule: 'extra_cost_above', subject: null, firing: perHour > rules.extraCostAbove, value: perHour, threshold: rules.extraCostAbove });
  }
  if (rules.newBreakReason && facts.causes) {
    for (const row of facts.causes.window) {
      const subject = subjectOf(row);
      if (row.breaks > 0 && !facts.causes.known.has(subject)) found.push({ rule: 'new_break_reason', subject, firing: true, value: row.breaks, threshold: null });
    }
  }
  return found;
}
