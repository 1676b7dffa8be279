// Every relative link in README.md and docs/ leads to a file that exists and,
// with a #fragment, to a heading of it (GitHub's anchors): moving a section
// must not leave a link behind. Images are not checked: docs/ui.png is made by
// the page's test run.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? markdownFiles(join(dir, e.name)) : e.name.endsWith('.md') ? [join(dir, e.name)] : [],
  );
}

/** The text outside code blocks and inline code, where links are links. */
const prose = (text: string) => text.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');

/** GitHub's anchor for each heading: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const [, heading] of text.replace(/^```[\s\S]*?^```/gm, '').matchAll(/^#{1,6} (.+)$/gm)) {
    const slug = heading!.toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, '').replaceAll(' ', '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    out.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return out;
}

describe('documentation links', () => {
  const files = [join(ROOT, 'README.md'), ...markdownFiles(join(ROOT, 'docs'))];

  it('computes anchors as GitHub does', () => {
    expect([...anchors('# Claude Code\n## Full attribution with `OTEL_LOG_RAW_API_BODIES=1`\n## Limits\n## Limits\n')]).toEqual([
      'claude-code',
      'full-attribution-with-otel_log_raw_api_bodies1',
      'limits',
      'limits-1',
    ]);
  });

  it('lead to files and headings that exist', () => {
    const broken: string[] = [];
    let checked = 0;
    for (const file of files) {
      for (const [, target] of prose(readFileSync(file, 'utf8')).matchAll(/(?<!!)\[[^\]]*\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target!)) continue; // https:, mailto:
        checked++;
        const [path, fragment] = target!.split('#') as [string, string | undefined];
        const to = path ? join(dirname(file), decodeURIComponent(path)) : file;
        const where = `${relative(ROOT, file)}: ${target}`;
        if (!existsSync(to)) broken.push(`${where} (no such file)`);
        else if (fragment !== undefined && !anchors(readFileSync(to, 'utf8')).has(fragment)) broken.push(`${where} (no such heading)`);
      }
    }
    expect(checked).toBeGreaterThan(20);
    expect(broken).toEqual([]);
  });
});
