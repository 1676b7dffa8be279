// Reading /metrics in tests: `promtool check metrics` (required, never
// skipped) and the samples of an exposition.
import { spawnSync } from 'node:child_process';

/** Runs `promtool check metrics` on an exposition. */
export function promtoolCheck(exposition: string): { status: number | null; output: string } {
  const result = spawnSync('promtool', ['check', 'metrics'], { input: exposition, encoding: 'utf8', timeout: 10_000 });
  if ((result.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT') {
    throw new Error(
      'promtool is not installed, and /metrics must pass `promtool check metrics`: ' +
        'install it with `apt-get install prometheus` (Debian/Ubuntu; .ci/run does this in CI)',
    );
  }
  if (result.error) throw result.error;
  return { status: result.status, output: `${result.stdout}${result.stderr}`.trim() };
}

/** Samples by `name{labels}` exactly as exposed. */
export function samples(exposition: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of exposition.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    out.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return out;
}
