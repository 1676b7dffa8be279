// Insight 1, avoidable breaks: the breaks a known change to the harness would
// have prevented, with what each fix would have saved.
//
// Definitions (docs/insights.md#avoidable-breaks):
// - tools_order_changed: every one. The same tools in another order; a stable
//   sort of the tool declarations (by name) sends the same list every time.
// - system_changed: the ones whose changed system blocks are all *volatile*:
//   a block position that system_changed breaks changed at least
//   VOLATILE_MIN_CHANGES times in the range. A block that changed once is an
//   edit; one that changes again and again holds state (a date, a working
//   directory, a version or billing header) and belongs after the last
//   breakpoint.
// - breakpoint_lookback_exceeded: every one. Markers are not part of the
//   cache key, so moving them breaks nothing (SPEC §4.12); what breaks is a
//   turn whose breakpoints cannot reach the cached one, and a breakpoint
//   within the lookback (20 content blocks) would have reached it. A
//   re-timed marker (cache_control_changed) is a setting changed on purpose:
//   not counted.
// What a fix saves is what the breaks cost: their missed cache-read tokens and
// estimatedExtraCostUsd (SPEC §4.10), summed over the priced ones, unpriced
// breaks counted apart.
import { LOOKBACK_BLOCKS, lookbackGap } from '../attribution.js';
import type { BreakReason, Prefix } from '../types.js';
import { Tally, type Priced } from './money.js';

/** Changes at one system block position before it counts as volatile. */
export const VOLATILE_MIN_CHANGES = 2;
/** Example breaks listed per fix (each a link to its break). */
export const EXAMPLES = 5;

export const FIXES = ['stable_tool_order', 'volatile_block_after_breakpoint', 'breakpoint_within_lookback'] as const;
export type Fix = (typeof FIXES)[number];

export const FIX_REASON: Record<Fix, BreakReason> = {
  stable_tool_order: 'tools_order_changed',
  volatile_block_after_breakpoint: 'system_changed',
  breakpoint_within_lookback: 'breakpoint_lookback_exceeded',
};

export const FIX_ADVICE: Record<Fix, string> = {
  stable_tool_order: 'Sort tool declarations (by name) before every request, MCP tools included: the same tools then make the same prefix.',
  volatile_block_after_breakpoint:
    'Move the system blocks that change (dates, working directories, version or billing headers) after the last cache breakpoint, or into the first user message.',
  breakpoint_within_lookback: `Keep a cache breakpoint within ${LOOKBACK_BLOCKS} content blocks after the previous request's last one (on each of the last two user messages, or one more inside a long step of parallel tool calls): a lookup walks back at most ${LOOKBACK_BLOCKS} blocks. Markers may move freely: they are not part of the cache key.`,
};

/** A tool, system block position or lookback distance that took part in the avoidable breaks. */
export interface Involved {
  name: string;
  breaks: number;
}

export interface AvoidableFix {
  fix: Fix;
  reason: BreakReason;
  advice: string;
  breaks: number;
  missedCacheReadTokens: number;
  /** What these breaks cost, so what the fix would have saved. */
  savings: Priced;
  involved: Involved[];
  /** Request ids of some of the breaks, newest first. */
  examples: string[];
}

export interface Avoidable {
  fixes: AvoidableFix[];
  breaks: number;
  missedCacheReadTokens: number;
  savings: Priced;
}

/** What a break contributes: its figures and where it happened. */
export interface BreakFigures {
  requestId: string;
  ts: number;
  missedCacheReadTokens: number;
  estimatedExtraCostUsd: number | null;
}

/** Break totals already summed (rollups), in micro-dollars. */
export interface SummedBreaks {
  breaks: number;
  missedCacheReadTokens: number;
  extraCostMicroUsd: number;
  unpricedBreaks: number;
}

export interface AvoidableInput {
  /** Every tools_order_changed break, summed, with the tools they moved and a few of them. */
  toolOrder: { sums: SummedBreaks; tools: Involved[]; examples: string[] };
  /** The system_changed breaks, each with the block positions it changed. */
  system: (BreakFigures & { changedSystemBlocks: number[] | null })[];
  /** The breakpoint_lookback_exceeded breaks, each with the prefixes of its baseline and its turn (null: not stored). */
  lookback: (BreakFigures & { baseline: Prefix | null; turn: Prefix | null })[];
}

class FixTally {
  readonly money = new Tally();
  missed = 0;
  readonly involved = new Map<string, number>();
  readonly examples: { requestId: string; ts: number }[] = [];

  add(b: BreakFigures, involved: readonly string[]): void {
    this.money.add(b.estimatedExtraCostUsd);
    this.missed += b.missedCacheReadTokens;
    for (const name of involved) this.involved.set(name, (this.involved.get(name) ?? 0) + 1);
    this.examples.push({ requestId: b.requestId, ts: b.ts });
  }

  result(fix: Fix): AvoidableFix {
    const examples = this.examples.sort((a, b) => b.ts - a.ts || (a.requestId < b.requestId ? -1 : 1)).slice(0, EXAMPLES).map((e) => e.requestId);
    return fixOf(fix, this.money.items, this.missed, this.money.priced, ranked(this.involved), examples);
  }
}

function fixOf(fix: Fix, breaks: number, missed: number, savings: Priced, involved: Involved[], examples: string[]): AvoidableFix {
  return { fix, reason: FIX_REASON[fix], advice: FIX_ADVICE[fix], breaks, missedCacheReadTokens: missed, savings, involved, examples };
}

/** Most breaks first, then by name. */
function ranked(counts: ReadonlyMap<string, number>): Involved[] {
  return [...counts].map(([name, breaks]) => ({ name, breaks })).sort((a, b) => b.breaks - a.breaks || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** How far the turn's next breakpoint lay from the cached one: "25 blocks", "no later breakpoint", or "unknown" when a prefix is not stored. */
export function lookbackDistance(baseline: Prefix | null, turn: Prefix | null): string {
  const gap = baseline && turn ? lookbackGap(baseline, turn) : undefined;
  if (gap === undefined) return 'unknown';
  return gap === null ? 'no later breakpoint' : `${gap} blocks`;
}

export function avoidableBreaks(input: AvoidableInput): Avoidable {
  const { sums, tools, examples } = input.toolOrder;
  const toolMoney = new Tally();
  toolMoney.addMicro(sums.extraCostMicroUsd, sums.breaks, sums.unpricedBreaks);
  const toolFix = fixOf('stable_tool_order', sums.breaks, sums.missedCacheReadTokens, toolMoney.priced, tools, examples.slice(0, EXAMPLES));

  const changes = new Map<number, number>();
  for (const b of input.system) for (const k of b.changedSystemBlocks ?? []) changes.set(k, (changes.get(k) ?? 0) + 1);
  const volatile = (k: number) => (changes.get(k) ?? 0) >= VOLATILE_MIN_CHANGES;
  const system = new FixTally();
  for (const b of input.system) {
    const blocks = b.changedSystemBlocks ?? [];
    if (blocks.length > 0 && blocks.every(volatile)) system.add(b, blocks.map((k) => `system:${k}`));
  }

  const lookback = new FixTally();
  for (const b of input.lookback) lookback.add(b, [lookbackDistance(b.baseline, b.turn)]);

  const fixes = [toolFix, system.result('volatile_block_after_breakpoint'), lookback.result('breakpoint_within_lookback')];
  const total = new Tally();
  total.addMicro(sums.extraCostMicroUsd, sums.breaks, sums.unpricedBreaks);
  total.addMicro(system.money.microUsd, system.money.items, system.money.unpriced);
  total.addMicro(lookback.money.microUsd, lookback.money.items, lookback.money.unpriced);
  return {
    fixes,
    breaks: total.items,
    missedCacheReadTokens: fixes.reduce((n, f) => n + f.missedCacheReadTokens, 0),
    savings: total.priced,
  };
}
