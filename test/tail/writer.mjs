// A separate process that writes files the way harnesses and log rotation
// do, one JSON command per line on stdin, answering {"done": id} on stdout
// when a command is finished. Appends go in random small chunks (a seeded
// generator, so a failure repeats), splitting lines and JSON objects.
import { appendFileSync, closeSync, copyFileSync, mkdirSync, openSync, renameSync, symlinkSync, truncateSync, unlinkSync, writeSync } from 'node:fs';
import { createInterface } from 'node:readline';

const handles = new Map();

function random(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Writes `data` in chunks of 1..maxChunk bytes, pausing delayMs between them. */
async function chunked(write, command) {
  const bytes = Buffer.from(command.data);
  const next = random(command.seed ?? 1);
  const max = command.maxChunk ?? 64;
  for (let at = 0; at < bytes.length; ) {
    const size = 1 + Math.floor(next() * max);
    write(bytes.subarray(at, at + size));
    at += size;
    if (command.delayMs) await sleep(command.delayMs * next());
  }
}

async function run(c) {
  switch (c.op) {
    case 'append':
      return chunked((chunk) => appendFileSync(c.path, chunk), c);
    case 'open':
      return void handles.set(c.handle, openSync(c.path, 'a'));
    case 'appendHandle':
      return chunked((chunk) => writeSync(handles.get(c.handle), chunk), c);
    case 'close':
      closeSync(handles.get(c.handle));
      return void handles.delete(c.handle);
    case 'rename':
      return renameSync(c.from, c.to);
    case 'copytruncate':
      copyFileSync(c.path, c.to);
      return truncateSync(c.path, 0);
    case 'symlink':
      // As Claude Code and Qwen Code update their `latest` link: remove, then link again.
      try {
        unlinkSync(c.path);
      } catch {}
      return symlinkSync(c.target, c.path);
    case 'unlink':
      return unlinkSync(c.path);
    case 'mkdir':
      return void mkdirSync(c.path, { recursive: true });
    default:
      throw new Error(`unknown op ${c.op}`);
  }
}

let chain = Promise.resolve();
createInterface({ input: process.stdin }).on('line', (line) => {
  const command = JSON.parse(line);
  chain = chain.then(async () => {
    try {
      await run(command);
      process.stdout.write(JSON.stringify({ done: command.id }) + '\n');
    } catch (error) {
      process.stdout.write(JSON.stringify({ done: command.id, error: String(error?.message ?? error) }) + '\n');
    }
  });
});
