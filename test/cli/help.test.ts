// `--help` for the program and for every command: exit 0, the usage line, and
// one row per option the command declares (flag, value name, variable,
// default), nothing more. The expectations come from the command definitions
// and config.ts's OPTIONS, so an option added without help fails here.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Command } from '../../src/cli/command.js';
import { demoCommand } from '../../src/cli/demo.js';
import { importCommand } from '../../src/cli/import.js';
import { keysCommand } from '../../src/cli/keys.js';
import { proxyCommand } from '../../src/cli/proxy.js';
import { reevaluateCommand } from '../../src/cli/reevaluate.js';
import { reportCommand } from '../../src/cli/report.js';
import { serveCommand } from '../../src/cli/serve.js';
import { tailCommand } from '../../src/cli/tail.js';
import { OPTIONS, type OptionName } from '../../src/config.js';
import { CLI } from '../e2e/process.js';
import { tempDir } from '../helpers.js';
import { cli } from './run.js';

/** Every command, in the order the overview lists them. */
const COMMANDS = [serveCommand, proxyCommand, importCommand, tailCommand, reportCommand, reevaluateCommand, demoCommand, keysCommand] as Command[];

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The option rows of a help text: every line that starts with two spaces and a flag. */
const flagsIn = (help: string) => [...help.matchAll(/^ {2}(--[a-z-]+)/gm)].map((m) => m[1]);

describe('cachebreak --help', () => {
  it.each([[['--help']], [['-h']], [['help']], [[]]])('%j prints the overview with every command and exits 0', async (argv) => {
    const { code, stdout, stderr } = await cli(argv);
    expect(code).toBe(0);
    expect(stderr).toBe('');
    expect(stdout).toMatch(/^Usage: cachebreak <command> \[options\]\n/);
    const listed = [...stdout.matchAll(/^ {2}([a-z]+) {2,}(.+)$/gm)].map((m) => [m[1], m[2]]);
    expect(listed).toEqual(COMMANDS.map((c) => [c.name, c.summary]));
    expect(stdout).toContain('Run "cachebreak <command> --help" for its options.');
  });

  // The executable, not only main(): its exit code is what a shell sees.
  it('exits 0 from the built executable too', () => {
    const run = spawnSync(process.execPath, [CLI, '--help'], { encoding: 'utf8', timeout: 15_000 });
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^Usage: cachebreak <command> \[options\]\n/);
  });
});

describe.each(COMMANDS.map((command) => ({ name: command.name, command })))('cachebreak $name --help', ({ name, command }) => {
  it('exits 0 with the usage line and the summary, and writes nothing to stderr', async () => {
    for (const flag of ['--help', '-h']) {
      const { code, stdout, stderr } = await cli([name, flag]);
      expect(code).toBe(0);
      expect(stderr).toBe('');
      expect(stdout.startsWith(`Usage: cachebreak ${command.usage}\n\n${command.summary}\n\nOptions:\n`)).toBe(true);
    }
  });

  it('has one row per declared option, with its value name, variable and default, and no other', async () => {
    const { stdout } = await cli([name, '--help']);
    expect(flagsIn(stdout)).toEqual([...command.options.map((option) => `--${option}`), '--help']);
    for (const option of command.options as OptionName[]) {
      const { env, valueName } = OPTIONS[option];
      const flag = valueName ? `--${option} ${valueName}` : `--${option}`;
      expect(stdout, `row of --${option}`).toMatch(new RegExp(`^ {2}${escape(flag)} {2,}\\S.*\\[${escape(env)}; default [^\\]]+\\]$`, 'm'));
    }
  });

  it('runs nothing when --help comes among other arguments', async () => {
    const db = join(tempDir(), 'never.db');
    const { code, stdout } = await cli([name, '--db', db, '--help', 'x.ndjson']);
    expect(code).toBe(0);
    expect(stdout.startsWith(`Usage: cachebreak ${command.usage}`)).toBe(true);
    // Had the command run, serve/import/demo/keys would have created the database.
    expect(existsSync(db)).toBe(false);
  });
});

describe('cachebreak keys <action> --help', () => {
  // keys has no per-action options: each action's --help is the keys help,
  // and none of them touches a database.
  it.each(['create', 'list', 'revoke'])('keys %s --help prints the keys help and creates no key', async (action) => {
    const db = join(tempDir(), 'keys.db');
    const { code, stdout, stderr } = await cli(['keys', action, '--help', '--db', db]);
    expect(code).toBe(0);
    expect(stderr).toBe('');
    expect(stdout).toBe((await cli(['keys', '--help'])).stdout);
    expect(stdout).toContain(`keys ${action} `);
    expect(existsSync(db)).toBe(false);
  });
});
