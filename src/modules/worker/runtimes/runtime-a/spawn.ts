import { spawn } from 'node:child_process';
import type { SpawnedProcess, SpawnOptions } from '@anthropic-ai/claude-agent-sdk';

/**
 * Spawns Claude Code for the SDK (`spawnClaudeCodeProcess`) so that a cancelled run stops at once. On abort the
 * SDK's own spawner first closes stdin and waits a ~2 s grace before SIGTERM, and meanwhile the CLI keeps streaming
 * from the provider (measured: the model request stayed open 2 s). SIGTERM starts the CLI's own graceful shutdown,
 * which still writes the transcript, so sending it on abort loses nothing; the SDK escalates to SIGKILL as before.
 */
export function claudeSpawner(abort: AbortSignal, stderr: (chunk: string) => void): (options: SpawnOptions) => SpawnedProcess {
  return (options) => {
    const child = spawn(options.command, options.args, { cwd: options.cwd, env: options.env, stdio: ['pipe', 'pipe', 'pipe'] });
    child.stderr.on('data', (chunk: Buffer) => stderr(chunk.toString('utf8')));
    // The SDK reports a failed launch itself; without a listener the 'error' event would crash the worker.
    child.on('error', (err) => stderr(err.message));
    const terminate = () => child.kill('SIGTERM');
    abort.addEventListener('abort', terminate, { once: true });
    child.once('exit', () => abort.removeEventListener('abort', terminate));
    return child;
  };
}
