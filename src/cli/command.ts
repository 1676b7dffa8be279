// What every command is: its options (from the one table in config.ts), its
// help text, and what it does.
import { ConfigError, optionsHelp, type OptionName, type Parsed } from '../config.js';

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

/**
 * A command that takes options only: a stray argument is a mistake, often
 * npm's: `npm start --port 4400` keeps --port for npm (as npm_config_port)
 * and passes 4400 on alone. Names the option npm kept and the `--` form.
 */
export function rejectStrayArguments(command: string, options: readonly OptionName[], positionals: readonly string[], env: Io['env']): void {
  const kept = env.npm_lifecycle_event === undefined ? [] : options.filter((name) => env[`npm_config_${name.replace(/-/g, '_')}`] !== undefined);
  if (kept.length === 0 && positionals.length === 0) return;
  const values = [...positionals];
  const flags = kept.map((name) => {
    const value = env[`npm_config_${name.replace(/-/g, '_')}`];
    const given = value === 'true' ? values.shift() : value;
    return given === undefined ? `--${name}` : `--${name} ${given}`;
  });
  const npmSaw = kept.map((name) => `--${name}`).join(', ');
  const problem =
    kept.length > 0
      ? `npm kept ${npmSaw} for itself${positionals.length > 0 ? ` and passed on "${positionals.join(' ')}"` : ''}; put options after --: npm ${env.npm_lifecycle_event === 'start' ? 'start' : `run ${env.npm_lifecycle_event}`} -- ${[...flags, ...values].join(' ')}`
      : `unexpected argument "${positionals[0]!.slice(0, 80)}": ${command} takes options only (--name value); through npm, put them after --: npm start -- --port 4400`;
  throw new ConfigError(problem);
}
