// The drizzle schema and the committed migrations agree: drizzle-kit generate,
// run with the project's own drizzle.config.ts against a copy of the
// migrations folder, finds no change and writes nothing. (STYLE.md §10: a
// schema edit without its migration must fail.) The repository's migrations/ is never
// the folder drizzle-kit writes to.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import config from '../../drizzle.config.js';
import { tempDir } from '../helpers.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CONFIG = join(ROOT, 'drizzle.config.ts');
const KIT = join(ROOT, 'node_modules', '.bin', 'drizzle-kit');
const OUT = normalize(config.out ?? 'drizzle');
const SCHEMA = normalize(String(config.schema));
const MIGRATIONS = join(ROOT, OUT);

/** Every file under `dir`, by relative path, with its content. */
function contents(dir: string): Record<string, string> {
  const files = readdirSync(dir, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile());
  return Object.fromEntries(files.map((entry) => [relative(dir, join(entry.parentPath, entry.name)), readFileSync(join(entry.parentPath, entry.name), 'utf8')]));
}

/**
 * A directory where drizzle.config.ts's relative paths resolve to the real
 * schema (a symlink) and to `migrations`: a copy of the committed folder, or
 * an empty one.
 */
function workspace(migrations: 'copy' | 'empty'): string {
  const dir = tempDir();
  const top = SCHEMA.split(/[\\/]/)[0]!;
  symlinkSync(join(ROOT, top), join(dir, top), 'dir');
  if (migrations === 'copy') cpSync(MIGRATIONS, join(dir, OUT), { recursive: true });
  else mkdirSync(join(dir, OUT));
  return dir;
}

/** drizzle-kit's paths are relative to the working directory, and it writes into config.out there. */
function generate(cwd: string) {
  const run = spawnSync(KIT, ['generate', '--config', CONFIG], { cwd, encoding: 'utf8', timeout: 60_000, stdio: ['ignore', 'pipe', 'pipe'] });
  return { status: run.status, output: `${run.stdout}${run.stderr}`, files: contents(join(cwd, OUT)) };
}

describe('drizzle schema and committed migrations', () => {
  it('agree: drizzle-kit generate reports no change and writes no file', () => {
    const committed = contents(MIGRATIONS);
    const run = generate(workspace('copy'));
    expect(run.output).toContain('No schema changes, nothing to migrate');
    expect(run.status).toBe(0);
    expect(run.files).toEqual(committed);
    expect(contents(MIGRATIONS)).toEqual(committed);
  });

  // The check above can fail: with the migrations missing, the same run
  // writes a new one (and leaves the committed folder alone).
  it('would notice a schema that no migration creates', () => {
    const committed = contents(MIGRATIONS);
    const run = generate(workspace('empty'));
    expect(run.status).toBe(0);
    expect(run.output).not.toContain('No schema changes');
    expect(Object.keys(run.files).filter((path) => path.endsWith('.sql'))).toHaveLength(1);
    expect(Object.values(run.files).join('\n')).toContain('CREATE TABLE `turns`');
    expect(contents(MIGRATIONS)).toEqual(committed);
  });
});
