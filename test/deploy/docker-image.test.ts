// deploy/Dockerfile builds the package from the files its COPY lines name,
// filtered by its ignore file (deploy/Dockerfile.dockerignore). No Docker
// daemon runs here, so the test builds that file set the way the image's
// build stage does: it copies exactly those files into an empty folder and
// runs the package's build there (what `npm ci` runs as `prepare`), then
// packs it. A file the build needs that the COPY lines or the ignore file
// leave out fails the build, as it would fail `docker build`.
//
// `npm ci` itself would install every dependency from the registry; this
// checkout's node_modules is reused instead (a symbolic link), since the
// dependencies are not what the file set decides.
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DOCKERFILE = readFileSync(join(ROOT, 'deploy/Dockerfile'), 'utf8');
const IGNORE = readFileSync(join(ROOT, 'deploy/Dockerfile.dockerignore'), 'utf8');
const run = promisify(execFile);

/** The build stage's instructions (up to the second FROM), continuation lines joined, comments dropped. */
function buildStage(): string[] {
  const lines = DOCKERFILE.replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  const stages = lines.reduce<string[][]>((all, line) => (/^FROM\s/i.test(line) ? [...all, [line]] : (all.at(-1)!.push(line), all)), []);
  if (stages.length < 2) throw new Error('deploy/Dockerfile has no separate build stage');
  return stages[0]!;
}

/** The copies of the build context: [sources, destination] of each COPY without --from, the destination relative to the WORKDIR. */
function copies(stage: string[]): { sources: string[]; destination: string }[] {
  const workdir = stage.find((line) => /^WORKDIR\s/i.test(line))?.split(/\s+/)[1] ?? '/';
  return stage
    .filter((line) => /^COPY\s/i.test(line) && !/--from=/.test(line))
    .map((line) => {
      const words = line.split(/\s+/).slice(1).filter((word) => !word.startsWith('--'));
      const destination = words.pop()!;
      return { sources: words, destination: posix.relative(workdir, posix.resolve(workdir, destination)) };
    });
}

const WILDCARDS: Record<string, string> = { '**/': '(?:.*/)?', '**': '.*', '*': '[^/]*', '?': '[^/]' };

/** A .dockerignore pattern as a regular expression on a context-relative path (Docker's rules: `*` within a segment, `**` across, `?` one character). */
function patternOf(glob: string): RegExp {
  const body = posix
    .normalize(glob.replace(/^\/+/, ''))
    .split(/(\*\*\/|\*\*|\*|\?)/)
    .map((part) => WILDCARDS[part] ?? part.replace(/[.+^${}()|[\]\\]/g, '\\$&'))
    .join('');
  return new RegExp(`^${body}$`);
}

const rules = IGNORE.split('\n')
  .map((line) => line.trim())
  .filter((line) => line !== '' && !line.startsWith('#'))
  .map((line) => ({ keep: line.startsWith('!'), pattern: patternOf(line.replace(/^!/, '')) }));

/** Whether the ignore file leaves `path` in the build context: the last rule matching it or a folder above it decides. */
function inContext(path: string): boolean {
  const segments = path.split('/');
  const prefixes = segments.map((_, i) => segments.slice(0, i + 1).join('/'));
  let kept = true;
  for (const rule of rules) if (prefixes.some((prefix) => rule.pattern.test(prefix))) kept = rule.keep;
  return kept;
}

/** Every file under `path` (a file or folder of the checkout), context-relative. */
function filesUnder(path: string): string[] {
  if (!statSync(join(ROOT, path)).isDirectory()) return [path];
  return readdirSync(join(ROOT, path)).flatMap((name) => filesUnder(posix.join(path, name)));
}

/** Copies into `into` what the build stage's COPY lines copy from the build context; returns the files copied, image-relative. */
function copyContext(into: string): string[] {
  const copied: string[] = [];
  for (const { sources, destination } of copies(buildStage())) {
    for (const source of sources) {
      if (!existsSync(join(ROOT, source))) throw new Error(`deploy/Dockerfile copies ${source}, which is not in the repository`);
      const directory = statSync(join(ROOT, source)).isDirectory();
      for (const file of filesUnder(source).filter(inContext)) {
        // `COPY dir dest` copies the folder's contents into dest; `COPY file … dest/` copies the file into dest.
        const target = posix.join(destination, directory ? posix.relative(source, file) : posix.basename(file));
        mkdirSync(dirname(join(into, target)), { recursive: true });
        cpSync(join(ROOT, file), join(into, target));
        copied.push(target);
      }
    }
  }
  return copied;
}

/** The environment without npm's own settings (npm test sets npm_config_*). */
function npmEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key) && !key.startsWith('CACHEBREAK_')));
}

async function npm(args: string[], cwd: string): Promise<{ ok: boolean; stdout: string; output: string }> {
  try {
    const { stdout, stderr } = await run('npm', args, { cwd, env: npmEnv(), timeout: 240_000, maxBuffer: 16 * 1024 * 1024 });
    return { ok: true, stdout, output: `${stdout}${stderr}` };
  } catch (error) {
    const { stdout = '', stderr = '', message } = error as { stdout?: string; stderr?: string; message: string };
    return { ok: false, stdout, output: `${message}\n${stdout}${stderr}` };
  }
}

describe('deploy/Dockerfile', () => {
  it('reads the ignore file as Docker does', () => {
    expect(inContext('package.json')).toBe(true);
    expect(inContext('src/cli.ts')).toBe(true);
    expect(inContext('node_modules/hono/package.json')).toBe(false);
    expect(inContext('dist/cli.js')).toBe(false);
    expect(inContext('test/helpers.ts')).toBe(false);
  });

  it("builds and packs from exactly the files its build stage copies", { timeout: 300_000 }, async () => {
    const stage = buildStage();
    // The build this test reproduces: install (whose `prepare` is the build), then pack.
    expect(stage.find((line) => /^RUN\s/i.test(line))).toMatch(/^RUN npm ci\b.*&& npm pack --ignore-scripts$/);
    expect(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts.prepare).toBe('npm run build');

    const dir = tempDir();
    const copied = copyContext(dir);
    expect(copied).toContain('package.json');
    expect(copied.filter((file) => /^(node_modules|dist|test)\//.test(file))).toEqual([]);
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');

    const build = await npm(['run', 'prepare'], dir);
    expect(build.ok, build.output).toBe(true);
    const packed = await npm(['pack', '--ignore-scripts', '--dry-run', '--json'], dir);
    expect(packed.ok, packed.output).toBe(true);
    const files = (JSON.parse(packed.stdout) as { files: { path: string }[] }[])[0]!.files.map((f) => f.path);
    for (const needed of ['dist/cli.js', 'dist/server.js', 'dist/detector/index.js', 'dist/detector/index.d.ts', 'dist/client/index.js', 'dist/client/index.d.ts', 'migrations/meta/_journal.json', 'LICENSE', 'README.md']) {
      expect(files, needed).toContain(needed);
    }
  });
});
