import type { RE2JS } from 're2js';
import { VfsError } from './paths.ts';

/**
 * The line test of `fs_search`. A regular expression comes from the model and runs over thousands of files on the
 * runner's event loop, so it runs on RE2 (the pure-JS `re2js` port): matching is linear in the line, and a pattern
 * like `(a+)+$` cannot stall every session the way a backtracking `RegExp` does. RE2 has no backreferences and no
 * lookaround (what makes backtracking necessary): such a pattern is a tool error that says so.
 */
export interface LinePattern {
  pattern: string;
  regex: boolean;
  ignoreCase: boolean;
}

export async function lineMatcher(o: LinePattern): Promise<(line: string) => boolean> {
  if (!o.regex) {
    const needle = o.ignoreCase ? o.pattern.toLowerCase() : o.pattern;
    return (line) => (o.ignoreCase ? line.toLowerCase() : line).includes(needle);
  }
  const unsupported = unsupportedSyntax(o.pattern);
  if (unsupported) throw new VfsError(`pattern: ${unsupported} are not supported (fs_search matches in linear time, RE2 syntax); search without them`);
  // RE2 loads with the first regular-expression search, not with the runner
  const { RE2JS: RE2 } = await import('re2js');
  let re: RE2JS;
  try {
    // JavaScript spellings a model writes (`\u0041`, `(?<name>…)`) become their RE2 forms first
    re = RE2.compile(RE2.translateRegExp(o.pattern), o.ignoreCase ? RE2.CASE_INSENSITIVE : 0);
  } catch (err) {
    throw new VfsError(`pattern: not a valid regular expression (${(err as Error).message})`);
  }
  return (line) => re.test(line);
}

/** Names the backtracking-only constructs in a pattern, outside character classes and escapes. */
function unsupportedSyntax(pattern: string): string | undefined {
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i];
    if (ch === '\\') {
      const next = pattern[i + 1] ?? '';
      if (!inClass && (/[1-9]/.test(next) || (next === 'k' && pattern[i + 2] === '<'))) return 'backreferences';
      i++;
    } else if (inClass) {
      if (ch === ']') inClass = false;
    } else if (ch === '[') inClass = true;
    else if (ch === '(' && /^\(\?(=|!|<=|<!)/.test(pattern.slice(i, i + 4))) return 'lookahead and lookbehind';
  }
  return undefined;
}
