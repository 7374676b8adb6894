/**
 * A newcomer following a link in README.md or docs/*.md must land somewhere: every relative link
 * points at a file that exists, and every `#anchor` on a Markdown target names one of its
 * headings (GitHub's heading ids). Links inside code are not links and are skipped.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '../..');
const pages = [
  join(root, 'README.md'),
  ...readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => join(root, 'docs', name)),
];

/** The text without fenced code blocks and inline code spans. */
function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '');
}

/** GitHub's id of a heading: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function headingIds(markdown: string): Set<string> {
  const ids = new Set<string>();
  const seen = new Map<string, number>();
  const withoutFences = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
  for (const match of withoutFences.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const text = (match[1] ?? '').replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
    const base = text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    ids.add(count === 0 ? base : `${base}-${count}`);
  }
  return ids;
}

interface Link {
  readonly page: string;
  readonly target: string;
}

const links: Link[] = pages.flatMap((page) =>
  [...prose(readFileSync(page, 'utf8')).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)]
    .map((match) => match[1] ?? '')
    // External links (http:, https:, mailto:, ...) are not ours to check offline.
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target))
    .map((target) => ({ page: relative(root, page), target })),
);

function split(link: Link): { file: string; anchor: string | undefined } {
  const [path = '', anchor] = link.target.split('#');
  const file = path === '' ? join(root, link.page) : resolve(dirname(join(root, link.page)), path);
  return { file, anchor };
}

const rows = links.map((link) => [`${link.page} → ${link.target}`, link] as const);

describe('links in README.md and docs/', () => {
  it('U4: the pages have relative links to check', () => {
    expect(links.length).toBeGreaterThan(10);
  });

  it.each(rows)('U4: every relative link in README and docs resolves: %s', (_name, link) => {
    const { file, anchor } = split(link);
    expect(existsSync(file), `${link.page} links to ${link.target}, which does not exist`).toBe(true);
    if (anchor === undefined || !file.endsWith('.md')) return;
    const ids = headingIds(readFileSync(file, 'utf8'));
    expect(
      [...ids],
      `${link.page} links to #${anchor}, which is no heading of ${relative(root, file)}`,
    ).toContain(anchor);
  });
});
