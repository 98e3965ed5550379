/**
 * Glob patterns over virtual paths, for the profile and pool filesystem policies: `*` matches within one segment,
 * `**` across segments, `?` one character. A pattern also covers everything below a path it matches, so `/home`
 * and `/home/**` both grant the whole home (a policy author rarely means "the directory but not its files").
 */
const cache = new Map<string, RegExp>();

function compile(pattern: string): RegExp {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i];
    if (ch === '*' && pattern[i + 1] === '*') {
      // `/**` at the end or `/**/` in the middle may also match nothing at all
      re += '.*';
      i++;
    } else if (ch === '*') re += '[^/]*';
    else if (ch === '?') re += '[^/]';
    else re += ch.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re.replace(/\/\.\*$/, '(?:/.*)?')}$`);
}

function regexOf(pattern: string): RegExp {
  let re = cache.get(pattern);
  if (!re) {
    re = compile(pattern.length > 1 ? pattern.replace(/\/+$/, '') : pattern);
    if (cache.size > 1000) cache.clear();
    cache.set(pattern, re);
  }
  return re;
}

/** True when `path` or one of its ancestors matches `pattern`. */
export function globCovers(pattern: string, path: string): boolean {
  const re = regexOf(pattern);
  for (let p = path; p; p = p.slice(0, Math.max(0, p.lastIndexOf('/')))) {
    if (re.test(p)) return true;
  }
  return false;
}

export function anyGlobCovers(patterns: readonly string[], path: string): boolean {
  return patterns.some((p) => globCovers(p, path));
}
