// `cachebreak import` streams: a file and standard input several times larger
// than the process's whole heap go in with every turn stored. Reading the file
// at once would die (a string that large does not fit in a 64 MB heap).
import { spawn } from 'node:child_process';
import { createReadStream, createWriteStream, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { CLI } from '../e2e/process.js';
import { tempDir } from '../helpers.js';

const HEAP_MB = 64;
/** Raw system text per line: hashed while importing and dropped, so the file is large and the database is not. */
const SYSTEM = 'You are a careful coding agent. '.repeat(160);
const TURNS = 20_000;
const T = Date.parse('2026-11-30T10:00:00.000Z');

function line(i: number): string {
  return JSON.stringify({
    type: 'turn',
    requestId: `req_${i}`,
    sessionId: `sess_${i % 50}`,
    ts: T + i * 1000,
    provider: 'anthropic',
    model: 'claude-sonnet-4-5',
    system: SYSTEM,
    usage: { input_tokens: 10, cache_read_input_tokens: 0, cache_creation_input_tokens: 4000, output_tokens: 5 },
  });
}

/** Writes the file a batch at a time, so the test itself stays small too. */
async function bigFile(path: string): Promise<number> {
  const out = createWriteStream(path);
  for (let i = 0; i < TURNS; i += 1000) {
    const chunk = Array.from({ length: Math.min(1000, TURNS - i) }, (_, k) => line(i + k)).join('\n') + '\n';
    if (!out.write(chunk)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
  }
  await new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(error) : resolve())));
  return statSync(path).size;
}

function importProcess(args: readonly string[], stdinFile?: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [`--max-old-space-size=${HEAP_MB}`, CLI, 'import', ...args], {
      stdio: [stdinFile ? 'pipe' : 'ignore', 'pipe', 'pipe'],
      env: Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('CACHEBREAK_'))),
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    if (stdinFile) createReadStream(stdinFile).pipe(child.stdin!);
    const timer = setTimeout(() => child.kill('SIGKILL'), 170_000);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

function turnCount(db: string): number {
  const sqlite = new Database(db, { readonly: true });
  try {
    return (sqlite.prepare('SELECT count(*) AS n FROM turns').get() as { n: number }).n;
  } finally {
    sqlite.close();
  }
}

describe('import of more than the heap holds', () => {
  it(`stores every turn of a file over 1.5 times a ${HEAP_MB} MB heap, from the file and from standard input`, { timeout: 400_000 }, async () => {
    const dir = tempDir();
    const file = join(dir, 'big.ndjson');
    const size = await bigFile(file);
    expect(size).toBeGreaterThan(1.5 * HEAP_MB * 1024 * 1024);

    const fromFile = await importProcess(['--db', join(dir, 'file.db'), file]);
    expect(fromFile.stderr).toBe('');
    expect(fromFile.code).toBe(0);
    expect(fromFile.stdout).toContain(`Imported ${TURNS.toLocaleString('en-US')} lines from 1 file`);
    expect(turnCount(join(dir, 'file.db'))).toBe(TURNS);

    const fromStdin = await importProcess(['--db', join(dir, 'stdin.db'), '-'], file);
    expect(fromStdin.stderr).toBe('');
    expect(fromStdin.code).toBe(0);
    expect(turnCount(join(dir, 'stdin.db'))).toBe(TURNS);
  });
});
