// Runs a cachebreak command in-process, as the executable would, with its
// output collected and the clock pinned.
import { Readable } from 'node:stream';
import type { Io } from '../../src/cli/command.js';
import { main } from '../../src/cli/main.js';

export const NOW = Date.parse('2026-11-30T12:00:00.000Z');

export interface RunOptions {
  /** Standard input, for `-`. */
  stdin?: string;
  interactive?: boolean;
  env?: Record<string, string>;
  now?: number;
  /** Stops a command that runs until stopped (tail). */
  signal?: AbortSignal;
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

export async function cli(argv: string[], options: RunOptions = {}): Promise<RunResult> {
  const result: RunResult = { code: -1, stdout: '', stderr: '' };
  const io: Io = {
    stdout: (text) => void (result.stdout += text),
    stderr: (text) => void (result.stderr += text),
    // Never the machine's CACHEBREAK_* variables.
    env: options.env ?? {},
    interactive: options.interactive ?? false,
    stdin: Readable.from(options.stdin === undefined ? [] : [Buffer.from(options.stdin)]),
    now: () => options.now ?? NOW,
    ...(options.signal ? { signal: options.signal } : {}),
  };
  result.code = await main(argv, io);
  return result;
}
