// What every command is: its options (from the one table in config.ts), its
// help text, and what it does.
import { optionsHelp, type OptionName, type Parsed } from '../config.js';

export interface Io {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Readonly<Record<string, string | undefined>>;
  /** True when stderr is a terminal (progress bars). */
  interactive: boolean;
  /** What `-` reads (import); absent where there is no standard input. */
  stdin?: AsyncIterable<Uint8Array>;
  /** The clock that "now" comes from (demo); Date.now when absent. */
  now?: () => number;
  /** Stops a command that runs until stopped (tail), as SIGINT or SIGTERM do. */
  signal?: AbortSignal;
}

export interface Command<N extends OptionName = OptionName> {
  name: string;
  summary: string;
  usage: string;
  options: readonly N[];
  /** Extra help text after the options. */
  details?: string;
  /** Resolves with the exit code; a long-running command resolves when it stops. */
  run(parsed: Parsed<N>, io: Io): Promise<number>;
}

export function commandHelp(command: Command): string {
  return [
    `Usage: cachebreak ${command.usage}`,
    '',
    command.summary,
    '',
    'Options:',
    optionsHelp(command.options),
    ...(command.details ? ['', command.details] : []),
    '',
  ].join('\n');
}
