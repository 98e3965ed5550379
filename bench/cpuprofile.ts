/**
 * Summarises V8 CPU profiles (`node --cpu-prof`): the top functions by self time, and self time grouped by file and by
 * package (a node_modules package, svc's own folder under src/, node's internals, GC). Busy time excludes `(idle)`.
 *
 *   node bench/cpuprofile.ts <file.cpuprofile | directory> [--top 25] [--inclusive]
 *
 * A directory sums every .cpuprofile in it (e.g. one process's profile, or several runs of one role).
 * `--inclusive` adds the top svc functions (files under src/) by total time, i.e. including their callees.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Where a frame's code lives: `pkg:<name>` for node_modules, `svc:<dir>` for our own src, `node:…`, or a V8 pseudo-frame. */
export function packageOf(url: string, functionName: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + '/node_modules/'.length).split('/');
    return `pkg:${rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]}`;
  }
  if (url.startsWith('node:')) return url.startsWith('node:internal/deps/undici') ? 'node:undici' : url.startsWith('node:internal/') ? `node:internal/${url.split('/')[2] ?? ''}`.replace(/\.js$/, '') : url;
  const path = url.startsWith('file://') ? fileURLToPath(url) : url;
  const rel = relative(ROOT, path);
  if (rel.startsWith('src/')) {
    const parts = rel.split('/');
    return `svc:${parts.slice(0, parts[1] === 'modules' ? 4 : 2).join('/')}`;
  }
  return rel.startsWith('..') ? path : `svc:${rel}`;
}

const fileOf = (f: CallFrame) => {
  if (!f.url) return f.functionName;
  const path = f.url.startsWith('file://') ? fileURLToPath(f.url) : f.url;
  const nm = path.lastIndexOf('/node_modules/');
  return nm >= 0 ? path.slice(nm + 1) : relative(ROOT, path).startsWith('..') ? path : relative(ROOT, path);
};
const functionKey = (f: CallFrame) => `${f.functionName || '(anonymous)'}  ${fileOf(f)}${f.url ? `:${f.lineNumber + 1}` : ''}`;

export interface Summary {
  files: number;
  wallMs: number;
  busyMs: number;
  idleMs: number;
  byFunction: Map<string, number>;
  byFile: Map<string, number>;
  byPackage: Map<string, number>;
  /**
   * Self time charged to where it comes from: a native or `node:` frame is charged to its nearest caller in svc or a
   * package (a socket write to the code that wrote). GC, idle and program stay as they are.
   */
  byCallerPackage: Map<string, number>;
  byCallerFunction: Map<string, number>;
  /** Total (self + callees) time of svc functions (files under src/). */
  inclusive: Map<string, number>;
}

export function summarise(profiles: Profile[]): Summary {
  const s: Summary = { files: profiles.length, wallMs: 0, busyMs: 0, idleMs: 0, byFunction: new Map(), byFile: new Map(), byPackage: new Map(), byCallerPackage: new Map(), byCallerFunction: new Map(), inclusive: new Map() };
  const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);
  for (const p of profiles) {
    s.wallMs += (p.endTime - p.startTime) / 1000;
    const byId = new Map(p.nodes.map((n) => [n.id, n]));
    const parent = new Map<number, number>();
    for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
    for (let i = 0; i < p.samples.length; i++) {
      // timeDeltas[i] is the time before sample i; the sample stands for the interval up to the next one
      const us = p.timeDeltas[i + 1] ?? p.timeDeltas[i] ?? 0;
      const ms = Math.max(0, us) / 1000;
      const node = byId.get(p.samples[i]);
      if (!node) continue;
      const f = node.callFrame;
      if (f.functionName === '(idle)') {
        s.idleMs += ms;
        continue;
      }
      s.busyMs += ms;
      add(s.byFunction, functionKey(f), ms);
      add(s.byFile, fileOf(f), ms);
      add(s.byPackage, packageOf(f.url, f.functionName), ms);
      let owner: CallFrame = f;
      const userland = (frame: CallFrame) => frame.url !== '' && !frame.url.startsWith('node:');
      if (!userland(f) && !f.functionName.startsWith('(')) {
        for (let id = parent.get(node.id); id !== undefined; id = parent.get(id)) {
          const frame = byId.get(id)!.callFrame;
          if (userland(frame)) {
            owner = frame;
            break;
          }
        }
      }
      add(s.byCallerPackage, packageOf(owner.url, owner.functionName), ms);
      add(s.byCallerFunction, owner === f ? functionKey(f) : `${functionKey(owner)}  ⟵ ${f.functionName || '(anonymous)'}`, ms);
      const seen = new Set<string>();
      for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
        const frame = byId.get(id)!.callFrame;
        if (!packageOf(frame.url, frame.functionName).startsWith('svc:src')) continue;
        const key = functionKey(frame);
        if (seen.has(key)) continue;
        seen.add(key);
        add(s.inclusive, key, ms);
      }
    }
  }
  return s;
}

function load(target: string): Profile[] {
  if (statSync(target).isDirectory()) {
    const out: Profile[] = [];
    for (const name of readdirSync(target)) {
      const path = join(target, name);
      if (statSync(path).isDirectory()) out.push(...load(path));
      else if (name.endsWith('.cpuprofile')) out.push(JSON.parse(readFileSync(path, 'utf8')) as Profile);
    }
    return out;
  }
  return [JSON.parse(readFileSync(target, 'utf8')) as Profile];
}

export function render(s: Summary, top = 25, inclusive = false): string {
  const pct = (v: number) => `${((100 * v) / (s.busyMs || 1)).toFixed(1).padStart(5)}%`;
  const section = (title: string, m: Map<string, number>, n: number) =>
    [`\n${title}`, ...[...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, v]) => `${v.toFixed(0).padStart(8)} ms ${pct(v)}  ${k}`)].join('\n');
  return [
    `${s.files} profile(s): ${s.wallMs.toFixed(0)} ms sampled, busy ${s.busyMs.toFixed(0)} ms, idle ${s.idleMs.toFixed(0)} ms (percentages of busy time)`,
    section('self time by package', s.byPackage, 20),
    section('self time by origin package (native and node: frames charged to their nearest svc or package caller)', s.byCallerPackage, 20),
    section('self time by origin function (⟵ the native or node: function it was spent in)', s.byCallerFunction, top),
    section('self time by file', s.byFile, top),
    section('self time by function', s.byFunction, top),
    ...(inclusive ? [section('total time (self + callees) of svc functions', s.inclusive, top)] : []),
  ].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: 'string', default: '25' }, inclusive: { type: 'boolean', default: false } } });
  if (positionals.length === 0) {
    process.stderr.write('usage: node bench/cpuprofile.ts <file.cpuprofile | directory> [--top 25] [--inclusive]\n');
    process.exit(2);
  }
  for (const target of positionals) {
    console.log(`== ${target}`);
    console.log(render(summarise(load(target)), Number(values.top), values.inclusive));
  }
}
