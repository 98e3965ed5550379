import { badRequest } from '../../../shared/errors.ts';
import type { NodeSpec, WorkflowState } from './plan.ts';

/** The graph rules of a workflow (a run's nodes, a definition's, a repaired run's) and its prompt templates. */
const REF = /\{\{\s*nodes\.([A-Za-z0-9_-]+)\.output\s*\}\}/g;
const INPUT = /\{\{\s*input\s*\}\}/g;

/**
 * A graph the engine can run: unique ids, dependencies that exist, no cycle, and prompts that only read the outputs of
 * nodes they (transitively) depend on (anything else would race). Throws 400 naming the problem.
 */
export function checkGraph(nodes: readonly NodeSpec[]): void {
  if (nodes.length === 0) throw badRequest('nodes: at least one node');
  const byId = new Map<string, NodeSpec>();
  for (const n of nodes) {
    if (byId.has(n.id)) throw badRequest(`nodes: duplicate node id: ${n.id}`);
    byId.set(n.id, n);
  }
  for (const n of nodes) {
    for (const d of n.dependsOn) {
      if (!byId.has(d)) throw badRequest(`nodes: node ${n.id} depends on unknown node: ${d}`);
      if (d === n.id) throw badRequest(`nodes: cycle: ${n.id} → ${n.id}`);
    }
  }
  // depth-first search with colours; the path on the stack names the cycle
  const colour = new Map<string, 1 | 2>();
  const path: string[] = [];
  const visit = (id: string): void => {
    colour.set(id, 1);
    path.push(id);
    for (const d of byId.get(id)!.dependsOn) {
      const c = colour.get(d);
      if (c === 1) throw badRequest(`nodes: cycle: ${[...path.slice(path.indexOf(d)), d].join(' → ')}`);
      if (c === undefined) visit(d);
    }
    path.pop();
    colour.set(id, 2);
  };
  for (const n of nodes) if (!colour.has(n.id)) visit(n.id);
  for (const n of nodes) {
    const upstream = ancestors(byId, n.id);
    for (const [, ref] of n.prompt.matchAll(REF)) {
      if (!byId.has(ref)) throw badRequest(`nodes: node ${n.id} reads the output of unknown node: ${ref}`);
      if (!upstream.has(ref)) throw badRequest(`nodes: node ${n.id} reads the output of ${ref} but does not depend on it`);
    }
  }
}

function ancestors(byId: Map<string, Pick<NodeSpec, 'dependsOn'>>, id: string): Set<string> {
  const seen = new Set<string>();
  const stack = [...(byId.get(id)?.dependsOn ?? [])];
  while (stack.length) {
    const d = stack.pop()!;
    if (seen.has(d)) continue;
    seen.add(d);
    stack.push(...(byId.get(d)?.dependsOn ?? []));
  }
  return seen;
}

/** `{{input}}` (a string as is, anything else as JSON) and `{{nodes.<id>.output}}`. */
export function renderPrompt(s: WorkflowState, node: NodeSpec): string {
  const input = s.input === undefined || s.input === null ? '' : typeof s.input === 'string' ? s.input : JSON.stringify(s.input);
  return node.prompt.replace(INPUT, () => input).replace(REF, (_m, id: string) => s.nodes.find((n) => n.id === id)?.output ?? '');
}

