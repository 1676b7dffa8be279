#!/usr/bin/env node
// The `cachebreak` executable: the process's streams and clock, handed to main.
import type { Io } from './cli/command.js';
import { main } from './cli/main.js';

const io: Io = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
  interactive: Boolean(process.stderr.isTTY),
  // Only `import -` touches standard input; opening it eagerly would give every command a stdin handle.
  get stdin() {
    return process.stdin;
  },
  now: Date.now,
};

process.exitCode = await main(process.argv.slice(2), io);
