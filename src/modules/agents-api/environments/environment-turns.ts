import type { RunnerClient } from '../../../contracts/runner.client.ts';
import type { SkillPayload } from '../../../contracts/worker.ts';
import { withTenant } from '../../../db/index.ts';
import type { EnvironmentStatus } from '../../../db/types.ts';
import { AppError, describeError } from '../../../shared/errors.ts';
import { environmentCapabilities } from './capabilities.ts';
import { readEnvironmentSetup } from './environments.service.ts';
import { setEnvironmentStatusRow } from './environments.repo.ts';
import { sandboxRunner, type SandboxDeps } from './sandbox.ts';
import { commandEnv, installEnv, noteItem, runSetup, setupPlan, type Emit, type TurnRef } from './setup.ts';
import { deliverFiles, forgetDelivered, markSandbox, restoreArtifacts, sandboxKept } from './workspace-sync.ts';
import type { SessionEventBody } from '../wire.ts';

/**
 * What a hosted environment does at the start of each turn, before the turn's first run (the engine calls `prepare`):
 * 1. it finds the runner holding the session's sandbox, hydrating the session there when its runner lost it
 *    (unreachable: the turn fails `connection_failed` and the environment is `disconnected`);
 * 2. a sandbox without the environment's mark lost its disk: every file of the environment goes in again, the setup
 *    runs again and the files earlier turns left (the session's artifacts) are written back, the restoration being a
 *    `command_execution` item that names what could not be restored; if restoring fails the turn fails naming it;
 * 3. files added to the environment since the last turn are written in;
 * 4. a `pending` environment is set up (setup.ts): `ready` and `connected`, or `failed` (and the session with it);
 * 5. its skills, plugins and capability directories become the runs' skills (capabilities.ts).
 */
export type Prepared =
  | {
      /** Variables of every command (the environment's `env`, plus where installed packages are). */
      env: Record<string, string> | undefined;
      /** The environment's `env` and install variables, for stdio MCP servers' `env_vars`. */
      environment?: { variables: Record<string, string>; install: Record<string, string> };
      skills?: SkillPayload[];
    }
  | { error: { code: string; message: string }; fatal?: boolean };

export interface EnvironmentTurnHooks {
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
    async prepare(t, environment, emit) {
      if (environment.type !== 'openai_hosted' || !environment.id) return { env: undefined };
      const { tenantId, sessionId, turnId } = t;
      const id = environment.id;
      const ws = await readEnvironmentSetup(deps.resources, tenantId, id);
      if (ws.status === 'failed') return { error: { code: 'sandbox_error', message: `the environment ${id} failed to set up` }, fatal: true };
      const env = commandEnv(ws.spec, ws.secrets);
      let client: RunnerClient;
      try {
        client = await deps.conductor.sessions.place(tenantId, sessionId);
      } catch (err) {
        return { error: { code: 'connection_failed', message: `the environment ${id} is ${ws.status === 'disconnected' ? 'disconnected' : 'not reachable'}: ${describeError(err)}` } };
      }
      const workspace = ws.workspaceDirectory;
      let lost: boolean;
      try {
        lost = !(await sandboxKept(client, tenantId, sessionId, ws.mark));
        if (lost) await forgetDelivered(deps, tenantId, id);
        await deliverFiles(deps, client, tenantId, sessionId, id, workspace);
      } catch (err) {
        return { error: { code: 'sandbox_error', message: `writing the files of environment ${id} into its sandbox failed: ${describeError(err)}` } };
      }
      if (ws.status === 'pending' || lost) {
        const failed = await runSetup(deps, t, setupPlan(ws.spec, ws.secrets), env, emit);
        if (failed) {
          await setStatus(tenantId, id, 'failed');
          emit([event(sessionId, turnId, id, 'failed', { code: 'setup_failed', message: failed, type: 'sandbox_error' })]);
          return { error: { code: 'sandbox_error', message: failed }, fatal: true };
        }
      }
      if (lost) {
        try {
          const { restored, lost: gone } = await restoreArtifacts(deps, client, tenantId, sessionId, workspace);
          const lines = [`the sandbox was lost (its runner lost its files): the environment's files and setup are back, and ${restored.length} file(s) earlier turns left${restored.length ? `: ${restored.join(', ')}` : ''}`];
          if (gone.length) lines.push(`not restored (their artifacts were deleted, and their bytes with them): ${gone.join(', ')}`);
          lines.push('anything else a turn left outside the workspace, or over the artifact size cap, is lost');
          noteItem(t, emit, { command: 'restore the sandbox', cwd: workspace, output: lines.join('\n'), status: gone.length ? 'incomplete' : 'completed' });
        } catch (err) {
          return { error: { code: 'sandbox_error', message: `the sandbox of environment ${id} was lost and restoring the files earlier turns left in ${workspace} failed (they are not there): ${describeError(err)}` } };
        }
      }
      try {
        if (lost || ws.mark === null) await markSandbox(deps, client, tenantId, sessionId, id);
      } catch (err) {
        return { error: { code: 'sandbox_error', message: `marking the sandbox of environment ${id} failed: ${describeError(err)}` } };
      }
      if (ws.status !== 'connected' || lost) {
        await setStatus(tenantId, id, 'connected');
        emit(ws.status === 'disconnected' && !lost ? [event(sessionId, turnId, id, 'connected')] : [event(sessionId, turnId, id, 'ready'), event(sessionId, turnId, id, 'connected')]);
      }
      let installed;
      try {
        installed = await environmentCapabilities(deps, client, tenantId, sessionId, { spec: ws.spec, workspaceDirectory: workspace });
      } catch (err) {
        return { error: { code: err instanceof AppError && err.status < 500 ? 'invalid_request' : 'sandbox_error', message: `installing the skills of environment ${id} failed: ${describeError(err)}` } };
      }
      if (installed.skipped.length) noteItem(t, emit, { command: 'install skills', cwd: workspace, output: `not installed:\n${installed.skipped.join('\n')}`, status: 'incomplete' });
      return { env, environment: { variables: ws.secrets.env, install: installEnv(ws.spec) }, ...(installed.skills.length ? { skills: installed.skills } : {}) };
    },

    async turnFailed({ tenantId, sessionId }, environment, code, emit) {
      if (environment.type !== 'openai_hosted' || !environment.id || code !== 'connection_failed') return;
      // a pending environment stays pending: it is set up by the first turn that reaches its sandbox
      if ((await readEnvironmentSetup(deps.resources, tenantId, environment.id)).status !== 'connected') return;
      if (await reachable(deps, tenantId, sessionId)) return;
      await setStatus(tenantId, environment.id, 'disconnected');
      emit([event(sessionId, null, environment.id, 'disconnected', { code: 'sandbox_unreachable', message: 'the sandbox of the session is not reachable', type: 'sandbox_error' })]);
    },
  };
}
