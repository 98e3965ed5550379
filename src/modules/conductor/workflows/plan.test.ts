import { describe, expect, it } from 'vitest';
import { AppError } from '../../../shared/errors.ts';
import { checkGraph, renderPrompt } from './graph.ts';
import { NODE, RUN, Transition, type NodeSpec, type WorkflowState } from './plan.ts';

const spec = (id: string, dependsOn: string[] = [], extra: Partial<NodeSpec> = {}): NodeSpec => ({ id, profile: 'p', prompt: '', dependsOn, onError: 'pause', ...extra });
const stateOf = (nodes: NodeSpec[], status: number = RUN.pending): WorkflowState => ({
  id: 'wfr_1',
  name: 'w',
  definitionId: null,
  input: { topic: 'x' },
  status,
  createdAt: '2026-01-01T00:00:00.000Z',
  startedAt: null,
  finishedAt: null,
  nodes: nodes.map((n) => ({ ...n, status: NODE.pending, runId: null, output: null, error: null, startedAt: null, finishedAt: null })),
});
let ids = 0;
const transition = (s: WorkflowState) => new Transition(s, { now: new Date('2026-01-01T00:00:01Z'), newRunId: () => `run_${++ids}` });
const statuses = (s: WorkflowState) => Object.fromEntries(s.nodes.map((n) => [n.id, n.status]));
const refusal = (fn: () => void) => {
  try {
    fn();
  } catch (err) {
    return err instanceof AppError ? `${err.status} ${err.message}` : String(err);
  }
  return 'accepted';
};

describe('checkGraph', () => {
  it('names the cycle, the dangling dependency and the duplicate id', () => {
    expect(refusal(() => checkGraph([spec('a', ['c']), spec('b', ['a']), spec('c', ['b'])]))).toBe('400 nodes: cycle: a → c → b → a');
    expect(refusal(() => checkGraph([spec('a', ['z'])]))).toBe('400 nodes: node a depends on unknown node: z');
    expect(refusal(() => checkGraph([spec('a'), spec('a')]))).toBe('400 nodes: duplicate node id: a');
    expect(refusal(() => checkGraph([spec('a'), spec('b', ['a']), spec('c', ['b'], { prompt: '{{nodes.a.output}}' })]))).toBe('accepted');
  });
});

describe('a transition', () => {
  it('starts the roots, readies dependants only when all their dependencies are ok or skipped, and completes', () => {
    const s = stateOf([spec('a'), spec('b'), spec('c', ['a', 'b'], { prompt: 'on {{input}}: {{nodes.a.output}}' })]);
    const t = transition(s);
    t.start();
    expect(t.changes.start.map((n) => n.id)).toEqual(['a', 'b']);
    expect(statuses(s)).toEqual({ a: NODE.running, b: NODE.running, c: NODE.pending });
    const [a, b] = s.nodes;
    transition(s).nodeFinished(a.runId!, { ok: true, output: 'A' });
    expect(statuses(s).c).toBe(NODE.pending);
    const last = transition(s);
    last.nodeFinished(b.runId!, { ok: true, output: 'B' });
    expect(last.changes.start.map((n) => n.id)).toEqual(['c']);
    expect(renderPrompt(s, s.nodes[2])).toBe('on {"topic":"x"}: A');
    const end = transition(s);
    end.nodeFinished(s.nodes[2].runId!, { ok: true, output: 'C' });
    expect(s.status).toBe(RUN.completed);
    expect(end.changes.events.map((e) => e.change)).toEqual([
      { nodeId: 'c', status: NODE.ok, statusLabel: 'ok' },
      { status: RUN.completed, statusLabel: 'completed' },
    ]);
  });

  it('ignores a stale report (a run that is no longer the node\'s)', () => {
    const s = stateOf([spec('a')]);
    transition(s).start();
    const t = transition(s);
    t.nodeFinished('run_other', { ok: true, output: 'x' });
    expect(t.changes.events).toEqual([]);
  });

  it('handles a failed node per onError: pause, fail (cancelling the rest and their runs) or continue', () => {
    const paused = stateOf([spec('a'), spec('b')]);
    transition(paused).start();
    transition(paused).nodeFinished(paused.nodes[0].runId!, { ok: false, error: 'boom' });
    expect(paused.status).toBe(RUN.paused);
    expect(statuses(paused)).toEqual({ a: NODE.error, b: NODE.running });

    const failed = stateOf([spec('a', [], { onError: 'fail' }), spec('b'), spec('c', ['b'])]);
    transition(failed).start();
    const t = transition(failed);
    t.nodeFinished(failed.nodes[0].runId!, { ok: false, error: 'boom' });
    expect(failed.status).toBe(RUN.failed);
    expect(statuses(failed)).toEqual({ a: NODE.error, b: NODE.cancelled, c: NODE.cancelled });
    expect(t.changes.cancelRuns).toEqual([failed.nodes[1].runId]);

    const cont = stateOf([spec('a', [], { onError: 'continue' }), spec('b', ['a'])]);
    transition(cont).start();
    const c = transition(cont);
    c.nodeFinished(cont.nodes[0].runId!, { ok: false, error: 'boom' });
    expect(c.changes.start.map((n) => n.id)).toEqual(['b']);
  });

  it('cancels the dependants of a cancelled node', () => {
    const s = stateOf([spec('a'), spec('b', ['a']), spec('c')], RUN.running);
    const t = transition(s);
    t.setNode(s.nodes[0], NODE.cancelled);
    t.settle();
    expect(statuses(s)).toEqual({ a: NODE.cancelled, b: NODE.cancelled, c: NODE.running });
  });
});
