import type { RunnerClient } from '../../../contracts/runner.client.ts';
import { withTenant } from '../../../db/index.ts';
import { randomId } from '../../../shared/ids.ts';
import { latestArtifacts } from '../sessions/artifacts.repo.ts';
import { markAllUndelivered, markDelivered, setSandboxMark, undeliveredFiles } from './environments.repo.ts';
import { AppError } from '../../../shared/errors.ts';
import { readSandboxText, sandboxPath, sandboxRunner, SANDBOX_DIR, sha256, writeSandboxFile, type SandboxDeps } from './sandbox.ts';

/**
 * What keeps a session's sandbox in step with its environment, between turns: the environment's files that are not
 * in the sandbox yet (added with `POST /agents/environments/{id}/files` after the session was created, or all of
 * them after a loss) are written in before the next turn; and a mark the sandbox holds once set up (a random value,
 * also stored on the environment) tells whether it is still the sandbox that was set up. A runner that lost its disk
 * (restarted empty, or another runner hydrating the session) hands back a sandbox without the mark: the turn then
 * restores it (setup.ts) from what the database keeps: the environment's files, its setup, and the files earlier
 * turns left (the session's artifacts).
 */
export const MARK_PATH = '/home/.svc/sandbox-mark';

/** A new session's sandbox: the environment's files written in, and marked as the environment's. */
export async function seedSandbox(deps: SandboxDeps, tenantId: string, sessionId: string, environmentId: string, workspace: string): Promise<void> {
  const client = await sandboxRunner(deps, tenantId, sessionId);
  if (!client) throw new AppError(503, 'the sandbox of the session is not reachable');
  await deliverFiles(deps, client, tenantId, sessionId, environmentId, workspace);
  await markSandbox(deps, client, tenantId, sessionId, environmentId);
}

/** Writes the environment's undelivered files into the sandbox and records them delivered; their workspace paths. */
export async function deliverFiles(deps: SandboxDeps, client: RunnerClient, tenantId: string, sessionId: string, environmentId: string, workspace: string): Promise<string[]> {
  const files = await withTenant(deps.resources.db, tenantId, (tx) => undeliveredFiles(tx, environmentId));
  const delivered: string[] = [];
  for (const f of files) {
    const rel = sandboxPath(workspace, f.path);
    if (rel) await writeSandboxFile(client, tenantId, sessionId, `${SANDBOX_DIR}/${rel}`, f.content);
    // a version added while this one was written stays undelivered (its bytes differ)
    await withTenant(deps.resources.db, tenantId, (tx) => markDelivered(tx, environmentId, f.path, Buffer.from(sha256(f.content), 'hex')));
    delivered.push(f.path);
  }
  return delivered;
}

/** Whether the sandbox is the one the environment set up: its mark is there (an environment without a mark yet: true). */
export async function sandboxKept(client: RunnerClient, tenantId: string, sessionId: string, mark: string | null): Promise<boolean> {
  if (mark === null) return true;
  return (await readSandboxText(client, tenantId, sessionId, MARK_PATH))?.trim() === mark;
}

/** Marks the sandbox as the environment's (after it was seeded, set up or restored). */
export async function markSandbox(deps: SandboxDeps, client: RunnerClient, tenantId: string, sessionId: string, environmentId: string): Promise<void> {
  const mark = randomId(32);
  await writeSandboxFile(client, tenantId, sessionId, MARK_PATH, new TextEncoder().encode(`${mark}\n`));
  await withTenant(deps.resources.db, tenantId, (tx) => setSandboxMark(tx, environmentId, mark));
}

/** A lost sandbox gets every file of the environment again. */
export async function forgetDelivered(deps: SandboxDeps, tenantId: string, environmentId: string): Promise<void> {
  await withTenant(deps.resources.db, tenantId, (tx) => markAllUndelivered(tx, environmentId));
}

/**
 * Writes back the files earlier turns left in `/work` (the latest artifact of each path) into a sandbox that lost
 * them; `lost` are those whose artifact was deleted (its bytes are gone with it).
 */
export async function restoreArtifacts(deps: SandboxDeps, client: RunnerClient, tenantId: string, sessionId: string, workspace: string): Promise<{ restored: string[]; lost: string[] }> {
  const rows = await withTenant(deps.resources.db, tenantId, (tx) => latestArtifacts(tx, sessionId));
  const restored: string[] = [];
  const lost: string[] = [];
  for (const a of rows) {
    const rel = sandboxPath(workspace, a.path);
    if (!rel) continue;
    if (!a.content) {
      lost.push(a.path);
      continue;
    }
    await writeSandboxFile(client, tenantId, sessionId, `${SANDBOX_DIR}/${rel}`, a.content);
    restored.push(a.path);
  }
  return { restored, lost };
}
