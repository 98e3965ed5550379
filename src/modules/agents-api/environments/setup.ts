import { AppError, describeError } from '../../../shared/errors.ts';
import { randomId } from '../../../shared/ids.ts';
import type { SessionEventBody } from '../wire.ts';
import type { HostedSecrets, HostedSpec } from './hosted-spec.ts';
import { PLATFORM, sandboxRunner, SANDBOX_DIR, type SandboxDeps } from './sandbox.ts';
import { WORKSPACE } from './environment.schema.ts';
import type { LiveTurn } from '../turns/turn-state.ts';

/**
 * The setup of a hosted environment: its `packages` (npm and pip, into the sandbox's `/home/.local`), then its
 * `setup_commands` in order, each as `run_command` in the session's sandbox with the environment's `env`. Each step is
 * a `command_execution` item of the turn whose output arrives as `agent.output.command_execution_output.delta`. When
 * it runs (before the first turn's first run, and again for a sandbox that was lost) is environment-turns.ts's call.
 * The `env` of the environment reaches every later command too (each run carries it to the runner; stored sealed only).
 */
export type Emit = (bodies: SessionEventBody[]) => void;

/** Where packages go inside the sandbox (its `/home` is the session profile's own). */
const PREFIX = '/home/.local';
const PATH = `${PREFIX}/bin:/usr/local/bin:/usr/bin:/bin`;
const STEP_TIMEOUT_MS = 10 * 60_000;
/** How much of a failing step's output the environment's error carries. */
const ERROR_OUTPUT_CHARS = 4000;

/** A step of the plan: what the item shows (`command`, `cwd`) and the script that runs it. */
export interface SetupStep {
  command: string;
  cwd: string;
  script: string;
  args: string[];
}

/** The install steps, then the setup commands, in order (pure: unit-tested and shown as the plan). */
export function setupPlan(spec: Pick<HostedSpec, 'packages'>, secrets: HostedSecrets): SetupStep[] {
  const steps: SetupStep[] = [];
  const { npm, python } = spec.packages;
  if (npm.length) {
    steps.push({
      command: `npm install --global ${npm.join(' ')}`,
      cwd: WORKSPACE,
      script: `npm install --global --prefix ${PREFIX} --no-audit --no-fund --no-update-notifier "$@"`,
      args: npm,
    });
  }
  if (python.length) {
    steps.push({
      command: `pip install ${python.join(' ')}`,
      cwd: WORKSPACE,
      script: 'python3 -m pip install --user --break-system-packages --no-input --disable-pip-version-check "$@"',
      args: python,
    });
  }
  for (const s of secrets.setup_commands) steps.push({ command: s.command, cwd: s.cwd, script: s.command, args: [] });
  return steps;
}

/** Where installed packages are found (`PATH`, `NODE_PATH`), when the environment installs any. */
export function installEnv(spec: Pick<HostedSpec, 'packages'>): Record<string, string> {
  const installs = spec.packages.npm.length > 0 || spec.packages.python.length > 0;
  return installs ? { PATH, NODE_PATH: `${PREFIX}/lib/node_modules` } : {};
}

/** The variables every command of the environment gets: its `env`, plus where installed packages are found. */
export function commandEnv(spec: Pick<HostedSpec, 'packages'>, secrets: HostedSecrets): Record<string, string> | undefined {
  const env = { ...installEnv(spec), ...secrets.env };
  return Object.keys(env).length ? env : undefined;
}

/** Whether an environment has setup work (it is created `pending` and set up before its first turn). */
export const needsSetup = (spec: Pick<HostedSpec, 'packages'>, secrets: HostedSecrets) => setupPlan(spec, secrets).length > 0;

/** The sandbox directory of a workspace cwd (`/workspace/x` → `/work/x`); other absolute paths stay as they are. */
function sandboxCwd(cwd: string): string {
  if (cwd === WORKSPACE) return SANDBOX_DIR;
  return cwd.startsWith(`${WORKSPACE}/`) ? `${SANDBOX_DIR}/${cwd.slice(WORKSPACE.length + 1)}` : cwd;
}

interface StepResult {
  ok: boolean;
  output: string;
  exitCode: number | null;
  durationMs: number | null;
  error?: string;
}

async function runStep(deps: SandboxDeps, tenantId: string, sessionId: string, step: SetupStep, env: Record<string, string> | undefined, onOutput: (text: string) => void): Promise<StepResult> {
  const client = await sandboxRunner(deps, tenantId, sessionId);
  if (!client) throw new AppError(503, 'the sandbox of the session is not reachable');
  const script = `mkdir -p -- "$SVC_SETUP_CWD" && cd -- "$SVC_SETUP_CWD" && ${step.script}`;
  const input = { command: 'sh', args: ['-c', script, 'sh', ...step.args], timeout_ms: STEP_TIMEOUT_MS, env: { ...env, SVC_SETUP_CWD: sandboxCwd(step.cwd) } };
  const result = await client.invokeToolStreaming(tenantId, sessionId, 'run_command', input, onOutput, PLATFORM);
  const v = (result.value ?? {}) as { stdout?: string; stderr?: string; exitCode?: number | null; durationMs?: number; error?: string };
  const output = [v.stdout, v.stderr].filter(Boolean).join('');
  return { ok: result.ok, output, exitCode: v.exitCode ?? null, durationMs: v.durationMs ?? null, ...(result.ok ? {} : { error: v.error ?? 'the command failed' }) };
}

/** The turn a hook works for: its ids, and its output indices (setup steps are items of the turn). */
export type TurnRef = Pick<LiveTurn, 'tenantId' | 'sessionId' | 'turnId'> & { translator: Pick<LiveTurn['translator'], 'nextOutputIndex'> };

/** One finished item of a turn: a `command_execution` that is added and done at once (a note of what happened). */
export function noteItem(t: TurnRef, emit: Emit, note: { command: string; cwd: string; output: string; status: 'completed' | 'incomplete' | 'failed' }): void {
  const outputIndex = t.translator.nextOutputIndex();
  const item = { type: 'command_execution', id: `cmd_${randomId(24)}`, command: note.command, cwd: note.cwd, duration_ms: null, exit_code: null, output: note.output, status: note.status, turn_id: t.turnId };
  const base = { session_id: t.sessionId, turn_id: t.turnId };
  emit([
    { type: 'agent.session.turn.item.added', ...base, item: { ...item, output: null, status: 'in_progress' }, output_index: outputIndex },
    { type: 'agent.session.turn.item.done', ...base, item, output_index: outputIndex },
  ]);
}

/**
 * Runs the setup steps in order, each a `command_execution` item of the turn with its output streamed; stops at the
 * first that fails and answers why (the step, its error and the tail of its output), else undefined.
 */
export async function runSetup(deps: SandboxDeps, t: TurnRef, steps: readonly SetupStep[], env: Record<string, string> | undefined, emit: Emit): Promise<string | undefined> {
  const { tenantId, sessionId, turnId } = t;
  for (const [n, step] of steps.entries()) {
    const itemId = `cmd_${randomId(24)}`;
    const outputIndex = t.translator.nextOutputIndex();
    const item = { type: 'command_execution', id: itemId, command: step.command, cwd: step.cwd, duration_ms: null, exit_code: null, output: null, status: 'in_progress', turn_id: turnId };
    emit([{ type: 'agent.session.turn.item.added', session_id: sessionId, turn_id: turnId, item, output_index: outputIndex }]);
    let r: StepResult;
    try {
      const delta = (text: string) => emit([{ type: 'agent.output.command_execution_output.delta', session_id: sessionId, turn_id: turnId, item_id: itemId, output_index: outputIndex, delta: text }]);
      r = await runStep(deps, tenantId, sessionId, step, env, delta);
    } catch (err) {
      r = { ok: false, output: '', exitCode: null, durationMs: null, error: describeError(err) };
    }
    const done = { ...item, duration_ms: r.durationMs, exit_code: r.exitCode, output: r.output, status: r.ok ? 'completed' : 'failed' };
    emit([{ type: 'agent.session.turn.item.done', session_id: sessionId, turn_id: turnId, item: done, output_index: outputIndex }]);
    if (!r.ok) {
      const tail = r.output.length > ERROR_OUTPUT_CHARS ? `…${r.output.slice(-ERROR_OUTPUT_CHARS)}` : r.output;
      return `setup step ${n + 1} (${step.command}) failed: ${r.error}${tail ? `\n${tail}` : ''}`;
    }
  }
  return undefined;
}
