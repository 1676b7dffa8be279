// The paths and globs to follow, checked before following: a pattern that is
// no pattern, a directory named without a glob or a path that cannot be read
// is a usage error at once; a path that does not exist yet is followed once it
// appears. `cachebreak tail` and `serve --tail` check alike.
import { accessSync, constants, statSync } from 'node:fs';
import { ConfigError } from '../../config.js';
import { compilePattern, type Pattern } from './glob.js';

function patternOf(text: string): Pattern {
  try {
    return compilePattern(text);
  } catch (error) {
    throw new ConfigError(`${text} is not a path or glob (${(error as Error).message}); character classes such as [a-z] must be in order`);
  }
}

/** Throws a ConfigError for the first unusable pattern; tells `notice` of each path that does not exist yet. */
export function checkPatterns(patterns: readonly string[], notice: (message: string) => void): void {
  if (patterns.length === 0) throw new ConfigError('name at least one file or glob to follow, e.g. "~/.claude/debug/*.txt"; see --help');
  for (const text of patterns) {
    const pattern = patternOf(text);
    const path = pattern.glob ? pattern.base : pattern.absolute;
    let directory: boolean;
    try {
      directory = statSync(path).isDirectory();
    } catch {
      notice(`${path} does not exist yet; it is followed from when it appears`);
      continue;
    }
    if (!pattern.glob && directory) throw new ConfigError(`${text} is a directory; follow the files in it with a glob such as "${text}/*.txt"`);
    try {
      accessSync(path, directory ? constants.R_OK | constants.X_OK : constants.R_OK);
    } catch {
      throw new ConfigError(`cannot read ${path}: permission denied`);
    }
  }
}
