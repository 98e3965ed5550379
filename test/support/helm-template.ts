import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';

/**
 * `helm template` for deploy/helm/svc where Helm itself cannot be installed (only the npm and Debian registries are
 * reachable here, and neither ships Helm). No npm package implements Helm's templates: the WebAssembly wrapper of Go's
 * text/template has no Sprig or Helm functions, and @ctrl/golang-template lacks variables, define/include and pipes
 * into functions. So the chart keeps to the subset below, and this renders exactly that subset; anything else throws
 * naming what it met, so a template that strays from the subset fails the test instead of rendering wrongly.
 *
 * Syntax: `{{ }}` with `{{-`/`-}}` trimming; comments `{{/* … *\/}}`; `.a.b`, `$`, `$x`, `$x.a`; string, number and
 * boolean literals; pipelines with `|` and `( … )`; `$x := …` and `$x = …`; `if`/`else if`/`else`, `range` (over a list,
 * a map in key order, or an int; `range $i, $v := …`), `with`/`else`, `define`, `end`.
 * Functions (Go's and Sprig's/Helm's meaning): include, default, quote, toYaml, indent, nindent, printf (%s %d %v),
 * b64enc, randAlphaNum, required, lookup (empty, as in `helm template`), eq, ne, not, and, or, empty, until, join,
 * list, append, trunc, trimSuffix, toString, int, add, sub, index, hasKey, dict.
 *
 * Numbers keep Helm's two kinds: every number in the values is a float64 (Helm reads values through JSON), so it prints
 * as Go's %v does (1e+06 from 1000000) and `printf "%d"` refuses it (`%!d(float64=8080)`) unless it went through `int`;
 * integer literals, `int`, `until`, `add`, `sub` and range indexes are Go ints.
 */

type Value = unknown;

/** A Go int (template literal, `int`, `until`, …), as opposed to a float64 read from the values. */
class GoInt {
  readonly n: number;
  constructor(n: number) {
    this.n = Math.trunc(n);
  }
}
const num = (v: Value): number => (v instanceof GoInt ? v.n : Number(v));
const plain = (v: Value): Value => (v instanceof GoInt ? v.n : Array.isArray(v) ? v.map(plain) : isMap(v) ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)])) : v);

/** Go's %v of a float64: shortest digits, exponent form from 1e+06 up (or below 1e-04), at least two exponent digits. */
function goFloat(n: number): string {
  if (n === 0 || !Number.isFinite(n)) return String(n);
  const exp = Math.floor(Math.log10(Math.abs(n)));
  if (exp >= -4 && exp < 6) return String(n);
  const [mant, e] = n.toExponential().split('e');
  const sign = e.startsWith('-') ? '-' : '+';
  return `${mant}e${sign}${e.replace(/^[+-]/, '').padStart(2, '0')}`;
}
interface Scope {
  dot: Value;
  root: Value;
  vars: Map<string, Value>[];
}

type Node =
  | { kind: 'text'; text: string }
  | { kind: 'action'; expr: string; assign?: { name: string; declare: boolean } }
  | { kind: 'if'; branches: { expr: string; body: Node[] }[]; otherwise: Node[] }
  | { kind: 'range'; expr: string; keyVar?: string; valVar?: string; body: Node[]; otherwise: Node[] }
  | { kind: 'with'; expr: string; body: Node[]; otherwise: Node[] };

export class TemplateError extends Error {}

export interface ChartRender {
  /** Rendered text of each template file (templates/*.yaml and NOTES.txt), by file name. */
  files: Record<string, string>;
  /** Every non-empty YAML document of the .yaml files, parsed. */
  manifests: Array<{ file: string; doc: Record<string, any> }>;
}

export function renderChart(chartDir: string, opts: { releaseName: string; namespace: string; values?: Record<string, unknown> }): ChartRender {
  const chart = parseYaml(readFileSync(join(chartDir, 'Chart.yaml'), 'utf8')) as Record<string, unknown>;
  const defaults = parseYaml(readFileSync(join(chartDir, 'values.yaml'), 'utf8')) as Record<string, unknown>;
  const values = mergeValues(defaults, opts.values ?? {});
  const root = {
    Values: values,
    Release: { Name: opts.releaseName, Namespace: opts.namespace, Service: 'Helm', IsInstall: true, IsUpgrade: false, Revision: 1 },
    Chart: { Name: chart.name, Version: chart.version, AppVersion: chart.appVersion },
  };
  const dir = join(chartDir, 'templates');
  const names = readdirSync(dir).sort();
  const defines = new Map<string, Node[]>();
  const parsed = new Map<string, Node[]>();
  for (const name of names) {
    const nodes = parseTemplate(readFileSync(join(dir, name), 'utf8'), defines, name);
    if (!name.startsWith('_')) parsed.set(name, nodes);
  }
  const engine = new Engine(defines);
  const files: Record<string, string> = {};
  const manifests: ChartRender['manifests'] = [];
  for (const [name, nodes] of parsed) {
    const text = engine.run(nodes, { dot: root, root, vars: [new Map([['$', root]])] });
    files[name] = text;
    if (!name.endsWith('.yaml')) continue;
    for (const part of text.split(/^---\s*$/m)) {
      const doc = parseYaml(part, { strict: true, uniqueKeys: true });
      if (doc !== null && doc !== undefined) manifests.push({ file: name, doc: doc as Record<string, any> });
    }
  }
  return { files, manifests };
}

/** Helm's merge of user values over the chart's: maps merge key by key, anything else replaces; null deletes. */
function mergeValues(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    if (v === null) delete out[k];
    else if (isMap(v) && isMap(out[k])) out[k] = mergeValues(out[k] as Record<string, unknown>, v);
    else out[k] = v;
  }
  return out;
}

const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

// ---------- parsing ----------

function parseTemplate(src: string, defines: Map<string, Node[]>, file: string): Node[] {
  // split into text and actions, applying the trim markers
  const parts: Array<{ text: string } | { action: string }> = [];
  let i = 0;
  while (i < src.length) {
    const open = src.indexOf('{{', i);
    if (open < 0) {
      parts.push({ text: src.slice(i) });
      break;
    }
    let text = src.slice(i, open);
    let start = open + 2;
    if (src[start] === '-' && /\s/.test(src[start + 1] ?? '')) {
      text = text.replace(/\s+$/, '');
      start += 1;
    }
    parts.push({ text });
    const close = findClose(src, start, file);
    let end = close;
    let next = close + 2;
    if (src[close - 1] === '-' && /\s/.test(src[close - 2] ?? '')) {
      end = close - 1;
      const m = /^\s*/.exec(src.slice(next))!;
      next += m[0].length;
    }
    parts.push({ action: src.slice(start, end).trim() });
    i = next;
  }
  let pos = 0;
  const block = (terminators: string[]): { nodes: Node[]; end: string } => {
    const nodes: Node[] = [];
    while (pos < parts.length) {
      const part = parts[pos++];
      if ('text' in part) {
        if (part.text) nodes.push({ kind: 'text', text: part.text });
        continue;
      }
      const a = part.action;
      if (a.startsWith('/*')) {
        if (!a.endsWith('*/')) throw new TemplateError(`${file}: unclosed comment`);
        continue;
      }
      const word = /^(\w+)\b\s*(.*)$/s.exec(a);
      const kw = word?.[1];
      const rest = word?.[2] ?? '';
      if (kw === 'end' || kw === 'else') {
        if (!terminators.includes(kw)) throw new TemplateError(`${file}: unexpected {{ ${a} }}`);
        pos--;
        return { nodes, end: kw };
      }
      if (kw === 'if') {
        const branches = [{ expr: rest, body: [] as Node[] }];
        let otherwise: Node[] = [];
        for (;;) {
          const r = block(['else', 'end']);
          branches[branches.length - 1].body = r.nodes;
          const term = (parts[pos++] as { action: string }).action;
          if (term === 'end') break;
          const elseIf = /^else\s+if\s+(.*)$/s.exec(term);
          if (elseIf) {
            branches.push({ expr: elseIf[1], body: [] });
            continue;
          }
          otherwise = expectEnd(block(['end']), file);
          break;
        }
        nodes.push({ kind: 'if', branches, otherwise });
      } else if (kw === 'range' || kw === 'with') {
        let expr = rest;
        let keyVar: string | undefined;
        let valVar: string | undefined;
        const decl = /^(\$\w+)(?:\s*,\s*(\$\w+))?\s*:=\s*(.*)$/s.exec(rest);
        if (decl) {
          if (kw === 'with') throw new TemplateError(`${file}: variables in with are outside the subset`);
          [keyVar, valVar, expr] = decl[2] ? [decl[1], decl[2], decl[3]] : [undefined, decl[1], decl[3]];
        }
        const body = block(['else', 'end']);
        const term = (parts[pos++] as { action: string }).action;
        const otherwise = term === 'else' ? expectEnd(block(['end']), file) : [];
        if (term !== 'else' && term !== 'end') throw new TemplateError(`${file}: {{ ${term} }} is outside the subset`);
        nodes.push(kw === 'range' ? { kind: 'range', expr, keyVar, valVar, body: body.nodes, otherwise } : { kind: 'with', expr, body: body.nodes, otherwise });
      } else if (kw === 'define') {
        const name = /^"([^"]+)"$/.exec(rest)?.[1];
        if (!name) throw new TemplateError(`${file}: define needs a quoted name`);
        defines.set(name, expectEnd(block(['end']), file));
      } else if (kw && ['template', 'block', 'break', 'continue'].includes(kw)) {
        throw new TemplateError(`${file}: {{ ${kw} }} is outside the subset (use include)`);
      } else {
        const assign = /^(\$\w+)\s*(:?=)\s*(.*)$/s.exec(a);
        if (assign) nodes.push({ kind: 'action', expr: assign[3], assign: { name: assign[1], declare: assign[2] === ':=' } });
        else nodes.push({ kind: 'action', expr: a });
      }
    }
    if (terminators.length) throw new TemplateError(`${file}: missing {{ end }}`);
    return { nodes, end: '' };
  };
  const expectEnd = (r: { nodes: Node[]; end: string }, f: string) => {
    const term = (parts[pos++] as { action: string } | undefined)?.action;
    if (r.end !== 'end' || term !== 'end') throw new TemplateError(`${f}: expected {{ end }}`);
    return r.nodes;
  };
  return block([]).nodes;
}

function findClose(src: string, from: number, file: string): number {
  let inString = false;
  for (let j = from; j < src.length - 1; j++) {
    const c = src[j];
    if (inString) {
      if (c === '\\') j++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '}' && src[j + 1] === '}') return j;
  }
  throw new TemplateError(`${file}: unclosed {{`);
}

type Token = { t: 'str' | 'num' | 'bool' | 'field' | 'var' | 'ident' | '|' | '(' | ')' | 'nil'; v: string };

function tokenize(expr: string): Token[] {
  const out: Token[] = [];
  const re = /\s*(?:("(?:[^"\\]|\\.)*")|(-?\d+(?:\.\d+)?)|(\$\w*(?:\.\w+)*)|((?:\.\w+)+|\.)|(\|)|(\()|(\))|([A-Za-z_]\w*))/y;
  let m: RegExpExecArray | null;
  let at = 0;
  while (at < expr.length) {
    re.lastIndex = at;
    m = re.exec(expr);
    if (!m || m[0].length === 0) {
      if (/^\s*$/.test(expr.slice(at))) break;
      throw new TemplateError(`cannot read "${expr.slice(at)}" in {{ ${expr} }}`);
    }
    at = re.lastIndex;
    if (m[1]) out.push({ t: 'str', v: JSON.parse(m[1]) });
    else if (m[2]) out.push({ t: 'num', v: m[2] });
    else if (m[3]) out.push({ t: 'var', v: m[3] });
    else if (m[4]) out.push({ t: 'field', v: m[4] });
    else if (m[5]) out.push({ t: '|', v: '|' });
    else if (m[6]) out.push({ t: '(', v: '(' });
    else if (m[7]) out.push({ t: ')', v: ')' });
    else if (m[8] === 'true' || m[8] === 'false') out.push({ t: 'bool', v: m[8] });
    else if (m[8] === 'nil') out.push({ t: 'nil', v: m[8] });
    else out.push({ t: 'ident', v: m[8] });
  }
  return out;
}

type Expr = { kind: 'lit'; value: Value } | { kind: 'field'; path: string } | { kind: 'var'; path: string } | { kind: 'pipe'; cmds: Expr[][] };

function parseExpr(expr: string): Expr {
  const toks = tokenize(expr);
  let p = 0;
  const pipeline = (): Expr => {
    const cmds: Expr[][] = [[]];
    while (p < toks.length && toks[p].t !== ')') {
      const tok = toks[p++];
      if (tok.t === '|') {
        cmds.push([]);
        continue;
      }
      const cmd = cmds[cmds.length - 1];
      if (tok.t === '(') {
        const inner = pipeline();
        if (toks[p++]?.t !== ')') throw new TemplateError(`missing ) in {{ ${expr} }}`);
        cmd.push(inner);
      } else if (tok.t === 'str') cmd.push({ kind: 'lit', value: tok.v });
      else if (tok.t === 'num') cmd.push({ kind: 'lit', value: /^-?\d+$/.test(tok.v) ? new GoInt(Number(tok.v)) : Number(tok.v) });
      else if (tok.t === 'bool') cmd.push({ kind: 'lit', value: tok.v === 'true' });
      else if (tok.t === 'nil') cmd.push({ kind: 'lit', value: null });
      else if (tok.t === 'field') cmd.push({ kind: 'field', path: tok.v });
      else if (tok.t === 'var') cmd.push({ kind: 'var', path: tok.v });
      else cmd.push({ kind: 'lit', value: { fn: tok.v } });
    }
    if (cmds.some((c) => c.length === 0)) throw new TemplateError(`empty command in {{ ${expr} }}`);
    return { kind: 'pipe', cmds };
  };
  const out = pipeline();
  if (p !== toks.length) throw new TemplateError(`unexpected ) in {{ ${expr} }}`);
  return out;
}

// ---------- evaluation ----------

const truthy = (v: Value): boolean =>
  !(v === undefined || (v instanceof GoInt && v.n === 0) || v === null || v === false || v === 0 || v === '' || (Array.isArray(v) && v.length === 0) || (isMap(v) && Object.keys(v).length === 0));

function toText(v: Value): string {
  if (v === undefined || v === null) return '';
  if (v instanceof GoInt) return String(v.n);
  if (typeof v === 'number') return goFloat(v);
  if (typeof v === 'object') throw new TemplateError(`printing a ${Array.isArray(v) ? 'list' : 'map'} directly is outside the subset (use toYaml)`);
  return String(v);
}

function dig(base: Value, path: string[], what: string): Value {
  let cur = base;
  for (const key of path) {
    if (cur === undefined || cur === null) return undefined;
    if (!isMap(cur)) throw new TemplateError(`${what}: cannot read .${key} of a ${typeof cur}`);
    cur = cur[key];
  }
  return cur;
}

class Engine {
  private readonly defines: Map<string, Node[]>;
  private readonly cache = new Map<string, Expr>();
  constructor(defines: Map<string, Node[]>) {
    this.defines = defines;
  }

  run(nodes: Node[], scope: Scope): string {
    let out = '';
    for (const node of nodes) {
      if (node.kind === 'text') out += node.text;
      else if (node.kind === 'action') {
        const value = this.eval(node.expr, scope);
        if (node.assign) {
          const frame = node.assign.declare ? scope.vars[scope.vars.length - 1] : scope.vars.findLast((f) => f.has(node.assign!.name));
          if (!frame) throw new TemplateError(`assignment to undeclared ${node.assign.name}`);
          frame.set(node.assign.name, value);
        } else out += toText(value);
      } else if (node.kind === 'if') {
        const branch = node.branches.find((b) => truthy(this.eval(b.expr, scope)));
        out += this.run(branch ? branch.body : node.otherwise, this.child(scope, scope.dot));
      } else if (node.kind === 'with') {
        const v = this.eval(node.expr, scope);
        out += truthy(v) ? this.run(node.body, this.child(scope, v)) : this.run(node.otherwise, this.child(scope, scope.dot));
      } else {
        const v = this.eval(node.expr, scope);
        const entries: Array<[Value, Value]> = Array.isArray(v)
          ? v.map((x, i) => [new GoInt(i), x])
          : isMap(v)
            ? Object.keys(v).sort().map((k) => [k, v[k]])
            : v instanceof GoInt
              ? Array.from({ length: v.n }, (_, i) => [new GoInt(i), new GoInt(i)])
              : v === undefined || v === null
                ? []
                : (() => {
                    throw new TemplateError(`range over a ${typeof v}`);
                  })();
        if (entries.length === 0) out += this.run(node.otherwise, this.child(scope, scope.dot));
        for (const [k, x] of entries) {
          const s = this.child(scope, x);
          if (node.keyVar) s.vars[s.vars.length - 1].set(node.keyVar, k);
          if (node.valVar) s.vars[s.vars.length - 1].set(node.valVar, x);
          out += this.run(node.body, s);
        }
      }
    }
    return out;
  }

  private child(scope: Scope, dot: Value): Scope {
    return { dot, root: scope.root, vars: [...scope.vars, new Map()] };
  }

  private eval(src: string, scope: Scope): Value {
    let expr = this.cache.get(src);
    if (!expr) this.cache.set(src, (expr = parseExpr(src)));
    return this.evalExpr(expr, scope, src);
  }

  private evalExpr(expr: Expr, scope: Scope, src: string): Value {
    if (expr.kind === 'lit') return expr.value;
    if (expr.kind === 'field') return expr.path === '.' ? scope.dot : dig(scope.dot, expr.path.slice(1).split('.'), src);
    if (expr.kind === 'var') {
      const [name, ...path] = expr.path.split('.');
      const frame = scope.vars.findLast((f) => f.has(name));
      if (!frame) throw new TemplateError(`undefined variable ${name} in {{ ${src} }}`);
      return dig(frame.get(name), path, src);
    }
    let piped: { value: Value } | undefined;
    for (const cmd of expr.cmds) {
      const head = cmd[0];
      const fn = head.kind === 'lit' && isMap(head.value) && typeof head.value.fn === 'string' ? head.value.fn : undefined;
      if (fn === undefined) {
        if (cmd.length > 1 || piped) throw new TemplateError(`{{ ${src} }}: only a function takes arguments or a pipe`);
        piped = { value: this.evalExpr(head, scope, src) };
        continue;
      }
      const args = cmd.slice(1).map((a) => this.evalExpr(a, scope, src));
      if (piped) args.push(piped.value);
      piped = { value: this.call(fn, args, src) };
    }
    return piped?.value;
  }

  private call(fn: string, a: Value[], src: string): Value {
    const arity = (n: number) => {
      if (a.length !== n) throw new TemplateError(`${fn} takes ${n} arguments, got ${a.length} in {{ ${src} }}`);
    };
    switch (fn) {
      case 'include': {
        arity(2);
        const body = this.defines.get(String(a[0]));
        if (!body) throw new TemplateError(`include of undefined template "${String(a[0])}"`);
        return this.run(body, { dot: a[1], root: a[1], vars: [new Map([['$', a[1]]])] });
      }
      case 'default':
        arity(2);
        return truthy(a[1]) ? a[1] : a[0];
      case 'quote':
        arity(1);
        return JSON.stringify(toText(a[0]));
      case 'toYaml':
        arity(1);
        return a[0] === undefined || a[0] === null ? 'null' : stringifyYaml(plain(a[0]), { lineWidth: 0 }).replace(/\n$/, '');
      case 'indent':
      case 'nindent': {
        arity(2);
        const pad = ' '.repeat(num(a[0]));
        const body = toText(a[1]).split('\n').map((l) => pad + l).join('\n');
        return fn === 'nindent' ? `\n${body}` : body;
      }
      case 'printf': {
        let k = 1;
        return String(a[0]).replace(/%([sdv%])/g, (_, c: string) => {
          if (c === '%') return '%';
          const arg = a[k++];
          if (c === 'd' && !(arg instanceof GoInt)) return `%!d(${typeof arg === 'number' ? 'float64' : typeof arg}=${toText(arg)})`;
          return toText(arg);
        });
      }
      case 'b64enc':
        arity(1);
        return Buffer.from(toText(a[0])).toString('base64');
      case 'randAlphaNum': {
        arity(1);
        const abc = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
        return [...randomBytes(num(a[0]))].map((b) => abc[b % abc.length]).join('');
      }
      case 'required':
        arity(2);
        if (!truthy(a[1])) throw new TemplateError(`required: ${String(a[0])}`);
        return a[1];
      case 'lookup':
        arity(4);
        return {};
      case 'eq':
        arity(2);
        return plain(a[0]) === plain(a[1]);
      case 'ne':
        arity(2);
        return plain(a[0]) !== plain(a[1]);
      case 'not':
        arity(1);
        return !truthy(a[0]);
      case 'and':
        return a.find((x) => !truthy(x)) ?? a[a.length - 1];
      case 'or':
        return a.find((x) => truthy(x)) ?? a[a.length - 1];
      case 'empty':
        arity(1);
        return !truthy(a[0]);
      case 'until':
        arity(1);
        return Array.from({ length: num(a[0]) }, (_, i) => new GoInt(i));
      case 'list':
        return a;
      case 'append':
        arity(2);
        return [...(a[0] as Value[]), a[1]];
      case 'join':
        arity(2);
        return (a[1] as Value[]).map(toText).join(String(a[0]));
      case 'trunc':
        arity(2);
        return toText(a[1]).slice(0, num(a[0]));
      case 'trimSuffix': {
        arity(2);
        const s = toText(a[1]);
        return s.endsWith(String(a[0])) ? s.slice(0, -String(a[0]).length) : s;
      }
      case 'toString':
        arity(1);
        return toText(a[0]);
      case 'int':
        arity(1);
        return new GoInt(num(a[0]));
      case 'add':
        return new GoInt(a.reduce((s: number, x) => s + num(x), 0));
      case 'sub':
        arity(2);
        return new GoInt(num(a[0]) - num(a[1]));
      case 'index':
        arity(2);
        return isMap(a[0]) ? a[0][toText(a[1])] : Array.isArray(a[0]) ? a[0][num(a[1])] : undefined;
      case 'hasKey':
        arity(2);
        return isMap(a[0]) && Object.hasOwn(a[0], String(a[1]));
      case 'dict': {
        const out: Record<string, Value> = {};
        for (let i = 0; i < a.length; i += 2) out[String(a[i])] = a[i + 1];
        return out;
      }
      default:
        throw new TemplateError(`function "${fn}" is outside the subset this renderer implements (test/support/helm-template.ts)`);
    }
  }
}
