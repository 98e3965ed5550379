import { createHash } from 'node:crypto';
import type { RunnerClient } from '../../../contracts/runner.client.ts';
import type { ConductorServices } from '../../conductor/index.ts';
import { AppError } from '../../../shared/errors.ts';
import type { ResourceDeps } from '../deps.ts';
import { isInside } from '../validation.ts';

/**
 * The sandbox of a hosted environment: the session's runner session on the runner's process substrate. Its profile
 * gets the file tools and `run_command` (cwd `/work`); the environment's workspace (`/workspace/...` by default) is
 * `/work/...` there. This file writes files into the sandbox (workspace-sync.ts delivers the environment's) and reads
 * `/work` back (for artifacts), always through the runner's tool endpoint (`invokeTool`), so it works wherever the
 * runner runs.
 *
 * Bytes: text files go through `fs_write`, anything that is not valid UTF-8 through `run_command` with base64 in its
 * arguments (a write prints nothing, so the session's output limit never cuts it); reads go through `fs_read` in
 * base64, a piece at a time. Content is byte-exact either way.
 */
export const SANDBOX_TOOLS = ['@default', '@exec'];
export const SANDBOX_DIR = '/work';
/** Raw bytes per `run_command` write: its base64 is one argument of the command (well under the kernel's 128 KiB). */
const CHUNK = 45 * 1024;
/** Files larger than this are not read back (not published as artifacts). */
export const MAX_ARTIFACT_BYTES = 8 * 1024 * 1024;
const MAX_ENTRIES = 5000;

export interface SandboxDeps {
  conductor: ConductorServices;
  resources: ResourceDeps;
}

export interface SandboxFile {
  /** Path inside the sandbox, relative to `/work` (no leading slash). */
  rel: string;
  content: Uint8Array;
  sha256: string;
}

export const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** The environment's own calls (seeding, setup, artifacts) are no model's: the agent's permission policies do not govern them. */
export const PLATFORM = { platform: true } as const;

/** The runner holding the session now, or undefined when it is not reachable (no sandbox to talk to). */
export async function sandboxRunner(deps: SandboxDeps, tenantId: string, sessionId: string): Promise<RunnerClient | undefined> {
  return deps.conductor.sessions.runnerOf(tenantId, sessionId);
}

async function tool(client: RunnerClient, tenantId: string, sessionId: string, name: string, input: unknown): Promise<unknown> {
  const result = await client.invokeTool(tenantId, sessionId, name, input, PLATFORM);
  if (!result.ok) {
    const error = (result.value as { error?: unknown } | null)?.error;
    throw new AppError(502, `sandbox ${name} failed: ${typeof error === 'string' ? error : JSON.stringify(result.value)}`);
  }
  return result.value;
}

const sh = (script: string, ...args: string[]) => ({ command: 'sh', args: ['-c', script, 'sh', ...args] });

/** The sandbox path (relative to `/work`) of a workspace path, or undefined when it lies outside the workspace. */
export function sandboxPath(workspaceDirectory: string, path: string): string | undefined {
  return isInside(path, workspaceDirectory) ? path.slice(workspaceDirectory.length + 1) : undefined;
}

/** The workspace path of a sandbox path: what artifacts show as `path`. */
export function workspacePath(workspaceDirectory: string, rel: string): string {
  return `${workspaceDirectory === '/' ? '' : workspaceDirectory}/${rel}`;
}

/**
 * Writes `content` to `path` (absolute, in the sandbox: `/work/...` or `/home/...`), parent folders created: UTF-8
 * text through `fs_write`, anything else through `run_command` in base64 chunks, byte for byte.
 */
export async function writeSandboxFile(client: RunnerClient, tenantId: string, sessionId: string, path: string, content: Uint8Array): Promise<void> {
  let text: string | undefined;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(content);
  } catch {
    text = undefined;
  }
  if (text !== undefined) {
    await tool(client, tenantId, sessionId, 'fs_write', { path, content: text });
    return;
  }
  const b64 = Buffer.from(content).toString('base64');
  const step = (CHUNK / 3) * 4;
  for (let i = 0; i === 0 || i < b64.length; i += step) {
    const redirect = i === 0 ? '>' : '>>';
    await tool(client, tenantId, sessionId, 'run_command', sh(`mkdir -p -- "$(dirname -- "$2")" && printf %s "$1" | base64 -d ${redirect} "$2"`, b64.slice(i, i + step), path));
  }
}

/** Reads a small text file of the sandbox; undefined when there is none. */
export async function readSandboxText(client: RunnerClient, tenantId: string, sessionId: string, path: string): Promise<string | undefined> {
  const result = await client.invokeTool(tenantId, sessionId, 'fs_read', { path }, PLATFORM);
  if (result.ok) return (result.value as { content: string }).content;
  const error = (result.value as { error?: unknown } | null)?.error;
  if (typeof error === 'string' && error.endsWith('no such file or directory')) return undefined;
  throw new AppError(502, `sandbox fs_read failed: ${typeof error === 'string' ? error : JSON.stringify(result.value)}`);
}

/**
 * The bytes of a file of `/work`, undefined when it is over MAX_ARTIFACT_BYTES or cannot be read (gone since it was
 * listed, not readable): `fs_read` in base64, a piece at a time from where the last ended. Not `run_command`: what a
 * command prints is cut at the session's output limit, which is about the agent's conversation, not svc's own reads.
 */
async function readBytes(client: RunnerClient, tenantId: string, sessionId: string, rel: string): Promise<Uint8Array | undefined> {
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    const result = await client.invokeTool(tenantId, sessionId, 'fs_read', { path: `${SANDBOX_DIR}/${rel}`, encoding: 'base64', offset: total }, PLATFORM);
    if (!result.ok) return undefined;
    const read = result.value as { size: number; truncated: boolean; content: string };
    if (read.size > MAX_ARTIFACT_BYTES) return undefined;
    const chunk = Buffer.from(read.content, 'base64');
    chunks.push(chunk);
    total += chunk.byteLength;
    // a file that grows while it is read is read to its size at the last piece (a truncated piece that brings nothing ends it too)
    if (!read.truncated || chunk.byteLength === 0) return new Uint8Array(Buffer.concat(chunks));
  }
}

/** Where installed skills and plugins are (the runner writes them before each run): not the session's work. */
const SKILLS_REL = '.skills/';

/**
 * Every regular file under the session's `/work` with its bytes (files over MAX_ARTIFACT_BYTES are left out, and so
 * is `/work/.skills`, where the environment's skills and plugins are installed).
 */
export async function collectSandboxFiles(client: RunnerClient, tenantId: string, sessionId: string): Promise<SandboxFile[]> {
  const listing = (await tool(client, tenantId, sessionId, 'fs_list', { path: SANDBOX_DIR, recursive: true, max_entries: MAX_ENTRIES })) as { entries: Array<{ path: string; type: string }> };
  const out: SandboxFile[] = [];
  for (const e of listing.entries) {
    if (e.type !== 'file' || !e.path.startsWith(`${SANDBOX_DIR}/`)) continue;
    const rel = e.path.slice(SANDBOX_DIR.length + 1);
    if (rel.startsWith(SKILLS_REL)) continue;
    const content = await readBytes(client, tenantId, sessionId, rel);
    if (content) out.push({ rel, content, sha256: sha256(content) });
  }
  return out;
}
