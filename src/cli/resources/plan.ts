import type { Api } from '../client/http.ts';
import type { Kind, Obj } from './kinds.ts';
import type { ResourceDoc } from './files.ts';

/**
 * What `apply` does to one resource: create it, update the fields that differ, or nothing. A field of the file
 * matches the server's when it is equal, where an object in the file matches one on the server that has at least its
 * fields (the server fills defaults: a pool member's role, an automation's timezone). For kinds that replace on
 * update (profiles), a field on the server that the file leaves out is a change to null.
 */
export type Changes = Record<string, { from: unknown; to: unknown }>;

export interface PlanStep {
  doc: ResourceDoc;
  action: 'create' | 'update' | 'unchanged';
  current: Obj | undefined;
  changes: Changes;
}

const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export function matches(want: unknown, have: unknown): boolean {
  if (want === null || want === undefined) return have === null || have === undefined;
  if (Array.isArray(want)) return Array.isArray(have) && have.length === want.length && want.every((w, i) => matches(w, have[i]));
  if (isObject(want)) return isObject(have) && Object.entries(want).every(([k, w]) => matches(w, have[k]));
  return want === have;
}

export function diff(kind: Kind, want: Obj, have: Obj): Changes {
  const changes: Changes = {};
  for (const [k, w] of Object.entries(want)) {
    if (kind.computed.includes(k)) continue;
    if (!matches(w, have[k])) changes[k] = { from: have[k] ?? null, to: w ?? null };
  }
  if (kind.replaces) {
    for (const [k, h] of Object.entries(have)) {
      if (k in want || kind.computed.includes(k) || h === null || h === undefined) continue;
      changes[k] = { from: h, to: null };
    }
  }
  return changes;
}

export async function planOf(api: Api, docs: ResourceDoc[]): Promise<PlanStep[]> {
  const steps: PlanStep[] = [];
  for (const doc of docs) {
    const current = await doc.kind.find(api, doc.name);
    if (!current) {
      steps.push({ doc, action: 'create', current, changes: {} });
      continue;
    }
    const changes = diff(doc.kind, doc.body, current);
    steps.push({ doc, action: Object.keys(changes).length ? 'update' : 'unchanged', current, changes });
  }
  return steps;
}

export async function applyStep(api: Api, step: PlanStep): Promise<void> {
  if (step.action === 'create') await step.doc.kind.create(api, step.doc.body);
  else if (step.action === 'update') await step.doc.kind.update(api, step.current!, step.doc.body, Object.keys(step.changes));
}

/** `"a" → "b"`: one change as a line shows it. */
export function describeChange(field: string, c: { from: unknown; to: unknown }): string {
  const show = (v: unknown) => (v === null || v === undefined ? '(none)' : JSON.stringify(v));
  return `${field}: ${show(c.from)} → ${show(c.to)}`;
}
