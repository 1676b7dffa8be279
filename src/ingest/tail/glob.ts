// Paths and globs to follow: `*`, `?`, `[abc]` within one path segment and
// `**` for any number of directories, as a shell reads them (a leading dot
// is matched only by a pattern segment that starts with one). A leading `~/`
// is the home directory, for patterns passed quoted or through the
// environment.
import { readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve, sep } from 'node:path';

const MAGIC = /[*?[]/;

export interface Pattern {
  /** The absolute path with wildcards. */
  absolute: string;
  /** Whether it has wildcards. */
  glob: boolean;
  /** The deepest directory without wildcards: where new matches can appear. */
  base: string;
  /** Whether a file name can match the pattern's last segment. */
  leaf: RegExp;
}

export function compilePattern(text: string, cwd = process.cwd()): Pattern {
  const expanded = text === '~' || text.startsWith('~/') ? join(homedir(), text.slice(1)) : text;
  const absolute = isAbsolute(expanded) ? resolve(expanded) : resolve(cwd, expanded);
  const segments = absolute.split(sep);
  const firstMagic = segments.findIndex((s) => MAGIC.test(s));
  const glob = firstMagic >= 0;
  const base = glob ? segments.slice(0, firstMagic).join(sep) || sep : dirname(absolute);
  const last = segments.at(-1)!;
  const leaf = last === '**' ? /^/ : segmentRegExp(last);
  return { absolute, glob, base, leaf };
}

function segmentRegExp(segment: string): RegExp {
  let out = '';
  for (let i = 0; i < segment.length; i++) {
    const c = segment[i]!;
    if (c === '*') out += '[^/]*';
    else if (c === '?') out += '[^/]';
    else if (c === '[') {
      const close = segment.indexOf(']', i + 2);
      if (close < 0) {
        out += '\\[';
        continue;
      }
      let body = segment.slice(i + 1, close);
      if (body.startsWith('!')) body = '^' + body.slice(1);
      out += `[${body.replace(/\\/g, '\\\\')}]`;
      i = close;
    } else out += c.replace(/[.+^${}()|\\]/g, '\\$&');
  }
  return new RegExp(`^${out}$`);
}

interface Entry {
  name: string;
  directory: boolean;
  link: boolean;
}

function entries(dir: string): Entry[] {
  try {
    return readdirSync(dir, { withFileTypes: true }).map((e) => ({ name: e.name, directory: e.isDirectory(), link: e.isSymbolicLink() }));
  } catch {
    return [];
  }
}

/** A match, and whether it is a symbolic link (only a link needs resolving to its file). */
export interface Match {
  path: string;
  link: boolean;
}

/** What a pattern matches now, and the directories whose changes can change that. */
export interface Expansion {
  matches: Match[];
  directories: string[];
}

/**
 * Synchronous: listing a directory is one system call, and a poll of idle
 * files should cost a few of them, not a round of promises per entry.
 */
export function expand(pattern: Pattern): Expansion {
  if (!pattern.glob) return { matches: [{ path: pattern.absolute, link: true }], directories: [pattern.base] };
  const rest = pattern.absolute.slice(pattern.base === sep ? 1 : pattern.base.length + 1).split(sep);
  const matches: Match[] = [];
  const directories: string[] = [];
  const walk = (dir: string, index: number): void => {
    const segment = rest[index]!;
    const last = index === rest.length - 1;
    directories.push(dir);
    const listed = entries(dir);
    if (segment === '**') {
      // Zero directories, then each subdirectory in turn; last, it matches every file below.
      if (!last) walk(dir, index + 1);
      for (const e of listed) {
        if (e.name.startsWith('.')) continue;
        if (e.directory) walk(join(dir, e.name), index);
        else if (last) matches.push({ path: join(dir, e.name), link: e.link });
      }
      return;
    }
    const re = segmentRegExp(segment);
    const dotted = segment.startsWith('.');
    for (const e of listed) {
      if ((e.name.startsWith('.') && !dotted) || !re.test(e.name)) continue;
      const path = join(dir, e.name);
      if (last) matches.push({ path, link: e.link });
      else if (e.directory) walk(path, index + 1);
    }
  };
  walk(pattern.base, 0);
  return { matches: matches.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)), directories };
}
