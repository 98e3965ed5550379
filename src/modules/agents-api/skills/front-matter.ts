/**
 * The YAML front matter of a SKILL.md: the block between a first `---` line and the next `---` (or `...`) line, read
 * with the `yaml` package (as `/api/skills/import` reads it), duplicate keys refused and aliases bounded. Answers the
 * mapping, or the problem a 400 should name: no front matter, a block never closed, YAML that does not parse, or a
 * value that is not a mapping.
 */
export type FrontMatter = { fields: Record<string, unknown>; problem?: undefined } | { problem: string; fields?: undefined };

export async function parseFrontMatter(text: string): Promise<FrontMatter> {
  const opening = /^\uFEFF?---[ \t]*(?:\r?\n|$)/.exec(text);
  if (!opening) return { problem: 'must start with YAML front matter (a "---" line, name: …, description: …, then "---")' };
  const rest = text.slice(opening[0].length);
  const closing = /^(?:---|\.\.\.)[ \t]*\r?$/m.exec(rest);
  if (!closing) return { problem: 'front matter is not closed by a "---" line' };
  // the YAML parser loads with the first skill read, not with the server
  const { parseDocument } = await import('yaml');
  const doc = parseDocument(rest.slice(0, closing.index), { uniqueKeys: true });
  if (doc.errors.length) return { problem: `front matter is not valid YAML: ${doc.errors[0].message.split('\n')[0]}` };
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 50 });
  } catch (err) {
    return { problem: `front matter could not be read: ${(err as Error).message}` };
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) return { problem: 'front matter must be a mapping of keys to values (name: …, description: …)' };
  return { fields: value as Record<string, unknown> };
}
