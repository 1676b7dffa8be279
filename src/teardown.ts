// What a start has opened, closed once in reverse: each part registers its
// closer as it starts, and a failed start and a shutdown run the same list,
// so nothing started is left open (a port listening, a thread, the database).

type Closer = () => unknown;

/** Where a part that starts registers how it is closed. */
export interface Closers {
  add(close: Closer): void;
}

export class Teardown implements Closers {
  private readonly steps: Closer[] = [];
  private running: Promise<void> | undefined;

  /** @param failed told of a closer that threw; the rest still run. */
  constructor(private readonly failed: (error: Error) => void) {}

  /** Closes what was just started, after everything started later. */
  add(close: Closer): void {
    this.steps.push(close);
  }

  /**
   * One step whose closers, added later, run at the same time: the ports,
   * which stop accepting together and then let their requests finish.
   */
  together(): Closers {
    const closers: Closer[] = [];
    this.add(() => Promise.all(closers.map((close) => this.guarded(close))));
    return { add: (close) => void closers.push(close) };
  }

  /** Runs every closer, the last added first, each after the one before has finished; once. Never rejects. */
  run(): Promise<void> {
    this.running ??= (async () => {
      for (const close of [...this.steps].reverse()) await this.guarded(close);
    })();
    return this.running;
  }

  private async guarded(close: Closer): Promise<void> {
    try {
      await close();
    } catch (error) {
      this.failed(error as Error);
    }
  }
}
