import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MODEL_PROVIDER_VARS } from '../../src/contracts/model-providers.ts';
import { LIMIT_ENV } from '../../src/contracts/sandbox-limits.ts';

/**
 * README is for users and short; the reference lives in docs/. These checks keep it so: README's length, no internal
 * vocabulary in what users read, every variable svc reads named in docs/configuration.md, and every link between the
 * pages (file and heading) leading somewhere.
 */
const ROOT = join(import.meta.dirname, '../..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const pages = ['README.md', 'SECURITY.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** GitHub's anchor of a heading: lowercase, punctuation dropped, spaces to hyphens. */
const slug = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .trim()
    .replace(/\s/g, '-');
const anchorsOf = (text: string) => new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1]!)));

describe('README and docs/', () => {
  it('keeps README at 300 lines or fewer', () => {
    expect(read('README.md').trimEnd().split('\n').length).toBeLessThanOrEqual(300);
  });

  it('speaks no internal vocabulary: no specification seeds, issue numbers or variants', () => {
    const hits = pages
      .filter((p) => p !== 'SECURITY.md')
      .flatMap((p) => read(p).split('\n').flatMap((line, i) => (/seed 0|issue [0-9]|variant [AB]/i.test(line) ? [`${p}:${i + 1}: ${line.trim()}`] : [])));
    expect(hits).toEqual([]);
  });

  it('names every environment variable svc reads in docs/configuration.md', () => {
    const doc = read('docs/configuration.md');
    const configFiles = readdirSync(join(ROOT, 'src/config')).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts')).map((f) => `src/config/${f}`);
    const sources = [...configFiles, 'src/cli/client/env.ts', 'src/cli/chat.ts', 'bin/svc.js'].map(read).join('\n');
    // what the code reads: `env.NAME`, or a name in quotes (the message of a ConfigError, a key looked up)
    const named = new Set([...sources.matchAll(/(?:env\.|['"`])((?:SVC|AGENT|STRIPE|OTEL|AWS|DOCKER)_[A-Z0-9_]*[A-Z0-9])\b/g)].map((m) => m[1]!));
    for (const v of ['PORT', 'MODE', 'DATABASE_URL', 'XDG_CONFIG_HOME', 'BROWSER', ...MODEL_PROVIDER_VARS, ...Object.values(LIMIT_ENV)]) named.add(v);
    // SVC_SANDBOX_<NAME>_MAX is written once for the nine limits
    expect(doc).toContain('`SVC_SANDBOX_<NAME>_MAX`');
    const missing = [...named].filter((v) => !doc.includes(`\`${v}\``)).sort();
    expect(missing).toEqual([]);
  });

  it('links only to files and headings that exist', () => {
    const broken: string[] = [];
    for (const page of pages) {
      const text = read(page);
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target!)) continue; // http:, https:, mailto:
        const [file, anchor] = target!.split('#') as [string, string | undefined];
        const path = file === '' ? page : relative(ROOT, join(ROOT, dirname(page), file));
        if (!existsSync(join(ROOT, path))) broken.push(`${page}: ${target} (no file ${path})`);
        else if (anchor && path.endsWith('.md') && !anchorsOf(read(path)).has(anchor)) broken.push(`${page}: ${target} (no heading #${anchor} in ${path})`);
      }
    }
    expect(broken).toEqual([]);
  });
});
