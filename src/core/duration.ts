// Durations as people and providers write them: "300ms", "40s", "5m", "1h", "24h", "30d".

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Milliseconds, or undefined when `text` is not a number followed by ms, s, m, h or d. */
export function parseDuration(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(text.trim());
  if (!match) return undefined;
  return Math.round(Number(match[1]) * UNIT_MS[match[2]!]!);
}
