/**
 * The YAML front matter of a SKILL.md, read for its top-level scalar keys (`name`, `description`, …): plain, single-
 * or double-quoted values, plain values continued on indented lines, and `|` / `>` block scalars. Nested mappings and
 * lists are skipped. Returns undefined when the text does not open with a `---` front-matter block.
 */
export function parseFrontMatter(text: string): Record<string, string> | undefined {
  const lines = text.replace(/^\uFEFF/, '').split(/\r\n|\r|\n/);
  if (lines[0]?.trim() !== '---') return undefined;
  const end = lines.findIndex((l, i) => i > 0 && (l.trim() === '---' || l.trim() === '...'));
  if (end < 0) return undefined;
  const body = lines.slice(1, end);
  const fields: Record<string, string> = {};
  for (let i = 0; i < body.length; i++) {
    const m = /^([A-Za-z_][\w-]*)\s*:(?:\s+(.*)|\s*)$/.exec(body[i]);
    if (!m) continue;
    const key = m[1];
    const raw = (m[2] ?? '').replace(/\s+#.*$/, '').trim();
    const continuation: string[] = [];
    while (i + 1 < body.length && (/^\s+\S/.test(body[i + 1]) || body[i + 1].trim() === '')) continuation.push(body[++i]);
    if (/^[|>][-+]?$/.test(raw)) {
      const indent = Math.min(...continuation.filter((l) => l.trim()).map((l) => l.length - l.trimStart().length));
      const block = continuation.map((l) => l.slice(Number.isFinite(indent) ? indent : 0));
      fields[key] = raw.startsWith('|') ? block.join('\n').trim() : foldLines(block);
    } else if (raw.startsWith('"') || raw.startsWith("'")) {
      fields[key] = unquote([raw, ...continuation.map((l) => l.trim())].join(' '));
    } else if (raw !== '' || continuation.length === 0) {
      fields[key] = [raw, ...continuation.map((l) => l.trim())].filter(Boolean).join(' ');
    }
  }
  return fields;
}

function foldLines(lines: string[]): string {
  return lines
    .map((l) => l.trim())
    .join('\n')
    .replace(/([^\n])\n(?=[^\n])/g, '$1 ')
    .trim();
}

function unquote(value: string): string {
  const q = value[0];
  const close = value.lastIndexOf(q);
  const inner = close > 0 ? value.slice(1, close) : value.slice(1);
  if (q === "'") return inner.replace(/''/g, "'");
  try {
    return JSON.parse(`"${inner.replace(/\n/g, '\\n')}"`) as string;
  } catch {
    return inner;
  }
}
