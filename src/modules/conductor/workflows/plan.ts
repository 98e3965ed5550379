/**
 * The workflow plan as a pure state machine (seed 000 "States and transitions": workflow run and node enums). The
 * engine loads a run and its nodes under a row lock, applies one of these transitions, and writes back what changed;
 * every change is recorded as a delta (the run's status and times, and the changed node whole), stored as one
 * `plan_status` event; the stream rebuilds the snapshot after each change from them (applyDelta), so storage grows with
 * the changes, not with changes × nodes.
 */
export const RUN = { pending: 0, running: 1, paused: 2, completed: 3, failed: 4, cancelled: 5 } as const;
export const NODE = { pending: 0, ready: 1, running: 2, ok: 3, error: 4, skipped: 5, cancelled: 6 } as const;
export const RUN_LABELS = ['pending', 'running', 'paused', 'completed', 'failed', 'cancelled'] as const;
export const NODE_LABELS = ['pending', 'ready', 'running', 'ok', 'error', 'skipped', 'cancelled'] as const;
export type RunLabel = (typeof RUN_LABELS)[number];
export type NodeLabel = (typeof NODE_LABELS)[number];
export type OnError = 'pause' | 'fail' | 'continue';

export const isTerminalRun = (s: number) => s === RUN.completed || s === RUN.failed || s === RUN.cancelled;
const isDoneNode = (s: number) => s === NODE.ok || s === NODE.error || s === NODE.skipped || s === NODE.cancelled;
/** Not started yet: node updates apply to these only. */
export const isPendingNode = (s: number) => s === NODE.pending || s === NODE.ready;

/** A node as written by the user (a run body, a definition, a replace_node). */
export interface NodeSpec {
  id: string;
  profile: string;
  prompt: string;
  dependsOn: string[];
  onError: OnError;
}

export interface NodeState extends NodeSpec {
  status: number;
  runId: string | null;
  output: string | null;
  error: string | null;
  startedAt: string | null;
  finishedAt: string | null;
}

export interface WorkflowState {
  id: string;
  name: string;
  definitionId: string | null;
  input: unknown;
  status: number;
  nodes: NodeState[];
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
}

/** What one transition did: the changes in order (each with the snapshot after it) and the runs to start or stop. */
export interface Changes {
  events: PlanDelta[];
  start: NodeState[];
  cancelRuns: string[];
}

export interface PlanChange {
  nodeId?: string;
  status: number;
  statusLabel: string;
}

/** One stored plan event: the change, the run's fields after it, and the changed node as it is after it. */
export interface PlanDelta {
  change: PlanChange;
  run: Pick<WireRun, 'status' | 'statusLabel' | 'startedAt' | 'finishedAt'>;
  node?: WireNode;
}

/** The snapshot after a delta (a new object; `before` is left alone). */
export function applyDelta(before: WireRun, d: PlanDelta): WireRun {
  return { ...before, ...d.run, nodes: d.node ? before.nodes.map((n) => (n.id === d.node!.id ? d.node! : n)) : before.nodes };
}

export interface WireNode {
  id: string;
  profile: string;
  prompt: string;
  dependsOn: string[];
  onError: OnError;
  status: number;
  statusLabel: NodeLabel;
  runId: string | null;
  output: string | null;
  error: string | null;
  startedAt: string | null;
  finishedAt: string | null;
}

export interface WireRun {
  id: string;
  name: string;
  definitionId: string | null;
  input: unknown;
  status: number | RunLabel;
  statusLabel: RunLabel;
  nodes: WireNode[];
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
}

/** The snapshot: integer statuses with labels beside them; `labels` gives the run's status as its label (create, start). */
export function toWire(s: WorkflowState, opts: { labels?: boolean } = {}): WireRun {
  return {
    id: s.id,
    name: s.name,
    definitionId: s.definitionId,
    input: s.input,
    status: opts.labels ? RUN_LABELS[s.status] : s.status,
    statusLabel: RUN_LABELS[s.status],
    nodes: s.nodes.map((n) => ({
      id: n.id,
      profile: n.profile,
      prompt: n.prompt,
      dependsOn: [...n.dependsOn],
      onError: n.onError,
      status: n.status,
      statusLabel: NODE_LABELS[n.status],
      runId: n.runId,
      output: n.output,
      error: n.error,
      startedAt: n.startedAt,
      finishedAt: n.finishedAt,
    })),
    createdAt: s.createdAt,
    startedAt: s.startedAt,
    finishedAt: s.finishedAt,
  };
}

/**
 * One transition on a loaded state. Mutations go through `setRun`/`setNode`, which record the change and the
 * snapshot after it; `settle()` moves the plan as far as it goes on its own.
 */
export class Transition {
  readonly changes: Changes = { events: [], start: [], cancelRuns: [] };
  readonly state: WorkflowState;
  readonly now: string;
  readonly newRunId: () => string;

  constructor(state: WorkflowState, opts: { now: Date; newRunId: () => string }) {
    this.state = state;
    this.now = opts.now.toISOString();
    this.newRunId = opts.newRunId;
  }

  node(id: string): NodeState | undefined {
    return this.state.nodes.find((n) => n.id === id);
  }

  setRun(status: number): void {
    const s = this.state;
    if (s.status === status) return;
    s.status = status;
    if (status === RUN.running) s.startedAt ??= this.now;
    if (isTerminalRun(status)) s.finishedAt = this.now;
    this.record({ status, statusLabel: RUN_LABELS[status] });
  }

  setNode(n: NodeState, status: number, patch: Partial<Pick<NodeState, 'output' | 'error' | 'runId'>> = {}): void {
    if (n.status === status && Object.keys(patch).length === 0) return;
    Object.assign(n, patch);
    if (status === NODE.running) {
      n.startedAt = this.now;
      n.finishedAt = null;
    }
    if (isDoneNode(status)) n.finishedAt = this.now;
    if (status === NODE.pending) {
      Object.assign(n, { runId: null, output: null, error: null, startedAt: null, finishedAt: null });
    }
    n.status = status;
    this.record({ nodeId: n.id, status, statusLabel: NODE_LABELS[status] });
  }

  /** Records a change to a node that kept its status (a repair rewrote its prompt or dependencies). */
  touch(n: NodeState): void {
    this.record({ nodeId: n.id, status: n.status, statusLabel: NODE_LABELS[n.status] });
  }

  private record(change: PlanChange): void {
    const wire = toWire(this.state);
    const run = { status: wire.status, statusLabel: wire.statusLabel, startedAt: wire.startedAt, finishedAt: wire.finishedAt };
    this.changes.events.push({ change, run, ...(change.nodeId ? { node: wire.nodes.find((n) => n.id === change.nodeId)! } : {}) });
  }

  start(): void {
    if (this.state.status !== RUN.pending) return;
    this.setRun(RUN.running);
    this.settle();
  }

  /** A node's run ended: `ok` with its output, or an error, then handled per the node's onError. Stale reports change nothing. */
  nodeFinished(runId: string, result: { ok: true; output: string } | { ok: false; error: string }): void {
    const n = this.state.nodes.find((x) => x.runId === runId);
    if (!n || n.status !== NODE.running || isTerminalRun(this.state.status)) return;
    if (result.ok) this.setNode(n, NODE.ok, { output: result.output });
    else this.nodeFailed(n, result.error);
    this.settle();
  }

  /** An error on a node (its run failed, never started, or a node update said so), handled per onError. */
  nodeFailed(n: NodeState, error: string | null): void {
    this.setNode(n, NODE.error, { error });
    if (n.onError === 'pause' && this.state.status === RUN.running) this.setRun(RUN.paused);
    if (n.onError === 'fail') this.stop(RUN.failed);
  }

  /** Cancel (→ cancelled) or abort / a failing node (→ failed): nodes not done are cancelled, with their runs. */
  stop(status: typeof RUN.failed | typeof RUN.cancelled): void {
    if (isTerminalRun(this.state.status)) return;
    const unstarted = new Set(this.changes.start); // claimed in this transition: their runs do not exist yet
    for (const n of this.state.nodes) {
      if (n.status === NODE.running && n.runId && !unstarted.has(n)) this.changes.cancelRuns.push(n.runId);
      if (!isDoneNode(n.status)) this.setNode(n, NODE.cancelled);
    }
    this.changes.start = this.changes.start.filter((n) => n.status === NODE.running);
    this.setRun(status);
  }

  /** A paused run resumes once no node holds it (an error whose onError is pause). */
  resumeIfClear(): void {
    if (this.state.status !== RUN.paused) return;
    if (this.state.nodes.some((n) => n.status === NODE.error && n.onError === 'pause')) return;
    this.setRun(RUN.running);
  }

  /**
   * Moves the plan on: a pending node whose dependencies are all ok or skipped (or errors that let dependants
   * continue) is ready; one behind a cancelled dependency is cancelled; in a running run, ready nodes start (claimed
   * here, started by the engine after the commit); a running run with every node done is completed.
   */
  settle(): void {
    const s = this.state;
    if (isTerminalRun(s.status)) return;
    for (let moved = true; moved; ) {
      moved = false;
      for (const n of s.nodes) {
        if (n.status !== NODE.pending) continue;
        const deps = n.dependsOn.map((d) => this.node(d)!);
        if (deps.some((d) => d.status === NODE.cancelled)) {
          this.setNode(n, NODE.cancelled, { error: 'a node it depends on was cancelled' });
          moved = true;
        } else if (deps.every((d) => d.status === NODE.ok || d.status === NODE.skipped || (d.status === NODE.error && d.onError === 'continue'))) {
          this.setNode(n, NODE.ready);
          moved = true;
        }
      }
    }
    // a node in error that holds the run (set while the run was pending, or left by a repair) pauses it
    if (s.status === RUN.running && s.nodes.some((n) => n.status === NODE.error && n.onError === 'pause')) this.setRun(RUN.paused);
    if (s.status !== RUN.running) return;
    for (const n of s.nodes) {
      if (n.status !== NODE.ready) continue;
      this.setNode(n, NODE.running, { runId: this.newRunId(), output: null, error: null });
      this.changes.start.push(n);
    }
    if (s.nodes.every((n) => isDoneNode(n.status))) this.setRun(RUN.completed);
  }
}
