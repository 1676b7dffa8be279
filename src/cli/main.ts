// cachebreak's command line: one command per file under cli/, dispatched here.
// Kept apart from the bin entry so tests call `main` with an in-memory Io.
import { ConfigError, parseOptions } from '../config.js';
import { CannotListen } from '../server.js';
import { DatabaseUnusable } from '../store/db.js';
import { commandHelp, type Command, type Io } from './command.js';
import { demoCommand } from './demo.js';
import { importCommand } from './import.js';
import { keysCommand } from './keys.js';
import { proxyCommand } from './proxy.js';
import { reevaluateCommand } from './reevaluate.js';
import { reportCommand } from './report.js';
import { serveCommand } from './serve.js';
import { tailCommand } from './tail.js';
import { VERSION } from '../version.js';

const COMMANDS = [serveCommand, proxyCommand, importCommand, tailCommand, reportCommand, reevaluateCommand, demoCommand, keysCommand] as Command[];

function overview(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    'Usage: cachebreak <command> [options]',
    '',
    'Explains why LLM prompt caches break: ingests request snapshots and usage,',
    'diffs consecutive turns, and serves the breaks to Grafana, Prometheus and a REST API.',
    '',
    'Commands:',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'Run "cachebreak <command> --help" for its options.',
    '"cachebreak --version" prints the version.',
    '',
  ].join('\n');
}

export async function main(argv: readonly string[], io: Io): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.stdout(overview());
    return 0;
  }
  if (name === '--version' || name === '-v' || name === 'version') {
    io.stdout(`cachebreak ${VERSION}\n`);
    return 0;
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) {
    io.stderr(`cachebreak: unknown command "${name}"\n\n${overview()}`);
    return 2;
  }
  try {
    const parsed = parseOptions(command.options, rest, io.env);
    if (parsed.help) {
      io.stdout(commandHelp(command));
      return 0;
    }
    return await command.run(parsed, io);
  } catch (error) {
    if (error instanceof ConfigError) {
      io.stderr(`cachebreak ${command.name}: ${error.message}\n`);
      return 2;
    }
    // What is wrong with the file and what to do: no stack trace.
    if (error instanceof DatabaseUnusable || error instanceof CannotListen) {
      io.stderr(`cachebreak ${command.name}: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
}
