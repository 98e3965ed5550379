import { withTenant } from '../../../db/index.ts';
import type { EnvironmentStatus } from '../../../db/types.ts';
import { AppError, describeError } from '../../../shared/errors.ts';
import { randomId } from '../../../shared/ids.ts';
import type { SessionEventBody } from '../wire.ts';
import { readEnvironmentSetup } from './environments.service.ts';
import { setEnvironmentStatusRow } from './environments.repo.ts';
import type { HostedSecrets, HostedSpec } from './hosted-spec.ts';
import { sandboxRunner, SANDBOX_DIR, type SandboxDeps } from './sandbox.ts';
import { WORKSPACE } from './environment.schema.ts';
import type { LiveTurn } from '../turns/turn-state.ts';

/**
 * Environments that set themselves up: before the first turn's first run, a `pending` hosted environment installs its
 * `packages` (npm and pip, into the sandbox's `/home/.local`) and runs its `setup_commands` in order, each as
 * `run_command` in the session's sandbox with the environment's `env`. Each step is a `command_execution` item of the
 * turn whose output arrives as `agent.output.command_execution_output.delta`; the environment is then `ready` and
 * `connected`, or `failed` with the failing step's output (and the session can no longer run). The `env` of the
 * environment reaches every later command too (each run carries it to the runner; it is stored sealed only).
 */
export type Emit = (bodies: SessionEventBody[]) => void;
export type Prepared = { env: Record<string, string> | undefined } | { error: { code: string; message: string } };

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

/** The variables every command of the environment gets: its `env`, plus where installed packages are found. */
export function commandEnv(spec: Pick<HostedSpec, 'packages'>, secrets: HostedSecrets): Record<string, string> | undefined {
  const installs = spec.packages.npm.length > 0 || spec.packages.python.length > 0;
  const env = { ...(installs ? { PATH, NODE_PATH: `${PREFIX}/lib/node_modules` } : {}), ...secrets.env };
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
  const result = await client.invokeToolStreaming(tenantId, sessionId, 'run_command', input, onOutput);
  const v = (result.value ?? {}) as { stdout?: string; stderr?: string; exitCode?: number | null; durationMs?: number; error?: string };
  const output = [v.stdout, v.stderr].filter(Boolean).join('');
  return { ok: result.ok, output, exitCode: v.exitCode ?? null, durationMs: v.durationMs ?? null, ...(result.ok ? {} : { error: v.error ?? 'the command failed' }) };
}

/** The turn a hook works for: its ids, and its output indices (setup steps are items of the turn). */
export type TurnRef = Pick<LiveTurn, 'tenantId' | 'sessionId' | 'turnId'> & { translator: Pick<LiveTurn['translator'], 'nextOutputIndex'> };

export interface EnvironmentTurnHooks {
  /** Before a turn's first run: sets a pending environment up, reconnects a disconnected one; the env for commands. */
  prepare(t: TurnRef, environment: { type: string; id?: string }, emit: Emit): Promise<Prepared>;
  /** After a turn failed: a lost sandbox disconnects the environment. */
  turnFailed(t: TurnRef, environment: { type: string; id?: string }, code: string, emit: Emit): Promise<void>;
}

/** Whether the runner holding the session answers now (asked, not taken from the fleet's last probe). */
async function reachable(deps: SandboxDeps, tenantId: string, sessionId: string): Promise<boolean> {
  const client = await sandboxRunner(deps, tenantId, sessionId).catch(() => undefined);
  return client ? client.healthz() : false;
}

export function environmentHooks(deps: SandboxDeps): EnvironmentTurnHooks {
  const setStatus = (tenantId: string, id: string, status: EnvironmentStatus) => withTenant(deps.resources.db, tenantId, (tx) => setEnvironmentStatusRow(tx, id, status));
  const event = (sessionId: string, turnId: string | null, id: string, status: string, error: { code: string; message: string; type: string } | null = null): SessionEventBody => ({
    type: `agent.session.environment.${status}`,
    session_id: sessionId,
    turn_id: turnId,
    environment: { id, type: 'openai_hosted', status, error },
  });

  return {
    async prepare({ tenantId, sessionId, turnId, translator }, environment, emit) {
      if (environment.type !== 'openai_hosted' || !environment.id) return { env: undefined };
      const id = environment.id;
      const ws = await readEnvironmentSetup(deps.resources, tenantId, id);
      const spec: Pick<HostedSpec, 'packages'> = ws.spec;
      const env = commandEnv(spec, ws.secrets);
      if (ws.status === 'failed') return { error: { code: 'sandbox_error', message: `the environment ${id} failed to set up` } };
      if (ws.status === 'disconnected') {
        if (!(await reachable(deps, tenantId, sessionId))) return { error: { code: 'connection_failed', message: `the environment ${id} is disconnected: the runner holding its sandbox does not answer` } };
        await setStatus(tenantId, id, 'connected');
        emit([event(sessionId, turnId, id, 'connected')]);
        return { env };
      }
      if (ws.status !== 'pending') return { env };
      for (const [n, step] of setupPlan(spec, ws.secrets).entries()) {
        const itemId = `cmd_${randomId(24)}`;
        const outputIndex = translator.nextOutputIndex();
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
          const message = `setup step ${n + 1} (${step.command}) failed: ${r.error}${tail ? `\n${tail}` : ''}`;
          await setStatus(tenantId, id, 'failed');
          emit([event(sessionId, turnId, id, 'failed', { code: 'setup_failed', message, type: 'sandbox_error' })]);
          return { error: { code: 'sandbox_error', message } };
        }
      }
      await setStatus(tenantId, id, 'connected');
      emit([event(sessionId, turnId, id, 'ready'), event(sessionId, turnId, id, 'connected')]);
      return { env };
    },

    async turnFailed({ tenantId, sessionId }, environment, code, emit) {
      if (environment.type !== 'openai_hosted' || !environment.id || code !== 'connection_failed') return;
      if (await reachable(deps, tenantId, sessionId)) return;
      await setStatus(tenantId, environment.id, 'disconnected');
      emit([event(sessionId, null, environment.id, 'disconnected', { code: 'sandbox_unreachable', message: 'the sandbox of the session is not reachable', type: 'sandbox_error' })]);
    },
  };
}
