import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The shape issue 14 set for every family that comes after it, checked over the source tree so a new family cannot
 * quietly copy an old habit back in: nothing outside the roles table branches on a role name, SQL lives in `*.repo.ts`
 * (and `src/db/`) only, role checks go through the shared guards, SSE through the one encoder, every conductor and
 * agents-API feature folder is a factory behind a door and one line of its list, and docs/architecture.md names every
 * folder of src/ and every table.
 * Each failure names the file and line, so the fix is where it says.
 */
const ROOT = join(import.meta.dirname, '../..');
const SRC = join(ROOT, 'src');

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : [path];
  });
}

/** Our TypeScript sources (tests excluded: they may build rows and compare roles as a user would). */
const sources = walk(SRC)
  .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
  .map((f) => ({ file: relative(ROOT, f), lines: readFileSync(f, 'utf8').split('\n') }));

/** `file:line: text` of every line outside `allowed` files that matches `pattern` (comments skipped). */
function offenders(pattern: RegExp, allowed: (file: string) => boolean): string[] {
  const out: string[] = [];
  for (const { file, lines } of sources) {
    if (allowed(file)) continue;
    lines.forEach((line, i) => {
      const code = line.trim();
      if (code.startsWith('//') || code.startsWith('*') || code.startsWith('/*')) return;
      if (pattern.test(line)) out.push(`${file}:${i + 1}: ${code}`);
    });
  }
  return out;
}

const ROLE = `(?:conductor|runner|worker)`;
const TENANT_ROLE = `(?:owner|admin|member|viewer)`;

describe('the shape of the source tree', () => {
  it('branches on a role name only in the roles table', () => {
    const branching = new RegExp(
      [`[!=]==?\\s*'${ROLE}'`, `'${ROLE}'\\s*[!=]==?`, `\\.(?:has|includes|indexOf)\\('${ROLE}'\\)`, `case '${ROLE}'`].join('|'),
    );
    expect(offenders(branching, (f) => f === 'src/app/roles.ts')).toEqual([]);
  });

  it('keeps SQL in *.repo.ts files and src/db/', () => {
    const sql = /\.(?:selectFrom|selectNoFrom|insertInto|updateTable|deleteFrom|mergeInto|replaceInto|executeQuery)\(|\bCompiledQuery\b|\bsql`|\bsql<|\bsql\.(?:raw|unsafe|ref|lit|join|id|table|val)\(|\.unsafe\(|import\s*\{[^}]*\bsql\b[^}]*\}\s*from\s*'kysely'/;
    expect(offenders(sql, (f) => f.endsWith('.repo.ts') || f.startsWith('src/db/'))).toEqual([]);
  });

  it('checks tenant roles only through the shared guards', () => {
    const inline = new RegExp([`role\\s*[!=]==?\\s*'${TENANT_ROLE}'`, `'${TENANT_ROLE}'\\s*[!=]==?\\s*\\w*\\.?role\\b`, `\\batLeast\\(`, `\\bRANK\\[`].join('|'));
    const guards = ['src/modules/conductor/identity/guards.ts', 'src/modules/conductor/identity/roles.ts'];
    expect(offenders(inline, (f) => guards.includes(f))).toEqual([]);
  });

  it('finds files of the package only through src/shared/package-root.ts (a path from import.meta breaks in the boot bundle)', () => {
    expect(offenders(/\bimport\.meta\b/, (f) => f === 'src/shared/package-root.ts')).toEqual([]);
  });

  it('writes server-sent events only through src/shared/sse.ts, the one encoder', () => {
    expect(offenders(/\bstreamSSE\b|\.writeSSE\(|`data: \$\{/, (f) => f === 'src/shared/sse.ts')).toEqual([]);
  });

  for (const [module, list] of [
    ['conductor', 'FEATURES'],
    ['agents-api', 'AGENTS_FEATURES'],
  ] as const) {
    it(`gives every ${module} feature folder a door exporting its factory, listed once in features.ts`, () => {
      const dir = join(SRC, 'modules', module);
      const features = readFileSync(join(dir, 'features.ts'), 'utf8');
      const listed = features.slice(features.indexOf(`export const ${list}`));
      const problems: string[] = [];
      for (const name of readdirSync(dir).filter((n) => statSync(join(dir, n)).isDirectory())) {
        const files = readdirSync(join(dir, name));
        const featureFile = files.find((f) => f.endsWith('.feature.ts'));
        if (!featureFile) continue; // a shared piece (run hooks), or a part of another family (turns/, events/ of sessions/)
        const door = files.includes('index.ts') ? readFileSync(join(dir, name, 'index.ts'), 'utf8') : '';
        const factory = /export const (\w+Feature)\b/.exec(readFileSync(join(dir, name, featureFile), 'utf8'))?.[1];
        if (!factory) problems.push(`${name}/${featureFile}: exports no \`const …Feature\` factory`);
        else if (!new RegExp(`export \\{[^}]*\\b${factory}\\b[^}]*\\} from './${featureFile}'`).test(door)) problems.push(`${name}/index.ts: does not export ${factory}`);
        else if ((listed.match(new RegExp(`^\\s*${factory},$`, 'gm')) ?? []).length !== 1) problems.push(`features.ts: ${factory} is not listed once in ${list}`);
        if (door.split('\n').length > 12) problems.push(`${name}/index.ts: a door is a few lines, not ${door.split('\n').length}`);
      }
      expect(problems).toEqual([]);
    });
  }

  it('keeps each module door a few lines: the factory lives beside it', () => {
    const long = ['conductor', 'agents-api', 'runner', 'worker', 'crud']
      .map((m) => `src/modules/${m}/index.ts`)
      .filter((f) => readFileSync(join(ROOT, f), 'utf8').trimEnd().split('\n').length > 20);
    expect(long).toEqual([]);
  });

  it("names every folder of src/ (two levels below a module) in docs/architecture.md's code structure", () => {
    const doc = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
    const structure = doc.slice(doc.indexOf('## Code structure'), doc.indexOf('## Tables: who owns what'));
    const folders = walk(SRC)
      .map((f) => relative(SRC, join(f, '..')))
      .filter((d, i, all) => d !== '' && all.indexOf(d) === i && d.split('/').length <= 3);
    const missing = folders.filter((d) => {
      const parts = d.split('/');
      const last = parts.at(-1)!;
      // a top folder is written `src/<name>/`; one inside it `<name>/` in its parent's line
      return parts.length === 1 ? !structure.includes(`\`src/${last}/`) : !structure.includes(`${last}/`);
    });
    expect(missing).toEqual([]);
  });

  it("names every table the migrations create in docs/architecture.md's tables list, so each has an owner", () => {
    const doc = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
    const tables = doc.slice(doc.indexOf('## Tables: who owns what'));
    const created = readdirSync(join(ROOT, 'sql'))
      .filter((f) => f.endsWith('.sql'))
      .flatMap((f) => [...readFileSync(join(ROOT, 'sql', f), 'utf8').matchAll(/create table (?:if not exists )?([a-z_]+)/gi)].map((m) => m[1]));
    expect([...new Set(created)].filter((t) => !tables.includes(`\`${t}\``))).toEqual([]);
  });
});
