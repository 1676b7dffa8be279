// Repeated log lines of one kind, bounded: the first is written at once, then
// at most one per interval, carrying how many were left out in between. A full
// disk fails every write; a flood of dropped connections fails every request:
// one line says so as well as ten thousand, and does not fill the disk further.

/** How often a repeated line is written at most. */
export const REPEAT_INTERVAL_MS = 60_000;

export class LogThrottle {
  private readonly kinds = new Map<string, { writtenAt: number; suppressed: number }>();

  constructor(
    private readonly intervalMs: number = REPEAT_INTERVAL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Whether a line of this kind is written now: undefined when not, else how
   * many lines of the kind were left out since the last one written.
   */
  admit(kind: string): number | undefined {
    const now = this.now();
    const seen = this.kinds.get(kind);
    if (seen && now - seen.writtenAt < this.intervalMs) {
      seen.suppressed++;
      return undefined;
    }
    this.kinds.set(kind, { writtenAt: now, suppressed: 0 });
    return seen?.suppressed ?? 0;
  }
}
