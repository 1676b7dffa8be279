// SPEC §4.5: what changed between two tool lists, and the other prefix parts.
import { byCodePoint } from './hash.js';
import type { ToolChanges, ToolRef } from './types.js';

export const NO_TOOL_CHANGES: ToolChanges = Object.freeze({
  added: [],
  removed: [],
  schemaChanged: [],
  moved: [],
}) as ToolChanges;

/**
 * Providers reject a request that repeats a tool name, so names are unique in
 * any prefix that got usage; then the common head and tail of two lists cannot
 * hold a change, and only the window between them is diffed. (Should a name
 * repeat, its first occurrence in the window counts.)
 */
export function diffTools(previous: readonly ToolRef[], current: readonly ToolRef[]): ToolChanges {
  const same = (a: ToolRef, b: ToolRef) => a.name === b.name && a.schemaHash === b.schemaHash;
  let head = 0;
  const shorter = Math.min(previous.length, current.length);
  while (head < shorter && same(previous[head]!, current[head]!)) head++;
  let tail = 0;
  while (
    tail < shorter - head &&
    same(previous[previous.length - 1 - tail]!, current[current.length - 1 - tail]!)
  ) {
    tail++;
  }
  const before = new Map<string, string>();
  for (let i = head; i < previous.length - tail; i++) {
    const tool = previous[i]!;
    if (!before.has(tool.name)) before.set(tool.name, tool.schemaHash);
  }
  const after = new Map<string, string>();
  for (let i = head; i < current.length - tail; i++) {
    const tool = current[i]!;
    if (!after.has(tool.name)) after.set(tool.name, tool.schemaHash);
  }

  const added: string[] = [];
  const removed: string[] = [];
  const schemaChanged: string[] = [];
  for (const [name, hash] of after) {
    const old = before.get(name);
    if (old === undefined) added.push(name);
    else if (old !== hash) schemaChanged.push(name);
  }
  for (const name of before.keys()) if (!after.has(name)) removed.push(name);

  // Filtered to the common names, a tool moved when its index differs:
  // appending or removing a tool moves nothing else.
  const commonBefore = [...before.keys()].filter((name) => after.has(name));
  const commonAfter = [...after.keys()].filter((name) => before.has(name));
  const moved: string[] = [];
  for (let i = 0; i < commonBefore.length; i++) {
    if (commonBefore[i] !== commonAfter[i]) moved.push(commonBefore[i]!);
  }
  return {
    added: added.sort(byCodePoint),
    removed: removed.sort(byCodePoint),
    schemaChanged: schemaChanged.sort(byCodePoint),
    moved: moved.sort(byCodePoint),
  };
}

/**
 * Tool lists of which one or both were cut (CutPlace "tools"): a cut list
 * holds only its leading tools, so only what the known parts prove is named.
 * A tool is added when it is missing from a complete previous list, removed
 * when it is missing from a complete current list, schema-changed when both
 * hold it with different hashes. Order is not judged: a tool past the cut
 * has no known place.
 */
export function diffCutTools(previous: readonly ToolRef[], current: readonly ToolRef[], previousCut: boolean, currentCut: boolean): ToolChanges {
  const before = new Map(previous.map((tool) => [tool.name, tool.schemaHash]));
  const after = new Map(current.map((tool) => [tool.name, tool.schemaHash]));
  const added = previousCut ? [] : [...after.keys()].filter((name) => !before.has(name));
  const removed = currentCut ? [] : [...before.keys()].filter((name) => !after.has(name));
  const schemaChanged = [...after].filter(([name, hash]) => before.has(name) && before.get(name) !== hash).map(([name]) => name);
  return { added: added.sort(byCodePoint), removed: removed.sort(byCodePoint), schemaChanged: schemaChanged.sort(byCodePoint), moved: [] };
}

/** The sorted (byte order), unique union of every changed tool name. */
export function changedToolNames(changes: ToolChanges): string[] {
  if (changes === NO_TOOL_CHANGES) return [];
  const names = new Set([...changes.added, ...changes.removed, ...changes.schemaChanged, ...changes.moved]);
  return [...names].sort(byCodePoint);
}

/** Indices of the system blocks that differ, including blocks present on one side only. */
export function diffBlocks(previous: readonly string[], current: readonly string[]): number[] {
  const changed: number[] = [];
  const length = Math.max(previous.length, current.length);
  for (let i = 0; i < length; i++) if (previous[i] !== current[i]) changed.push(i);
  return changed;
}

/** The first index at which `previous` stops being a prefix of `current`, or null if it is one. */
export function firstRewrittenIndex(previous: readonly string[], current: readonly string[]): number | null {
  for (let i = 0; i < previous.length; i++) {
    if (i >= current.length || previous[i] !== current[i]) return i;
  }
  return null;
}
