import { z } from 'zod';
import { runEvent } from '../../../contracts/run-event.ts';
import { limitMessage } from '../../../contracts/sandbox-limits.ts';
import { DEFAULT_MAX_OUTPUT_BYTES, DEFAULT_TIMEOUT_MS, type CommandResult } from '../substrates/process/commands.ts';
import { defineTool, ToolFailure } from './tool.ts';

/**
 * `run_command`: one command in the session's `/work` directory on the process substrate (substrates/process/commands.ts),
 * inside the runner's sandbox: the session's VirtualFS mounts only, network only when the profile says `enabled`.
 * A non-zero exit, a timeout or a cancel is a tool failure that still carries the output, so the model can react.
 * So is a tripped sandbox limit (its message names it: `memory limit 512 MiB reached: killed`, `limit` the fields),
 * which is also a `limit_exceeded` event of the run; output past the session's `outputBytes` is only cut.
 */
const MAX_TIMEOUT_MS = 10 * 60_000;

export const runCommandTool = defineTool({
  name: 'run_command',
  description:
    'Run a command in a sandbox whose working directory is the session work directory (/work); /home and the pool ' +
    'folders are visible when the profile may use them. Without args it is a /bin/sh -c command line; with args the ' +
    `program runs without a shell. Minimal environment (plus the variables of env), no network unless the profile enables it; timeout ${DEFAULT_TIMEOUT_MS / 1000}s by default; output capped (${DEFAULT_MAX_OUTPUT_BYTES / 1024} KiB per stream by default); ` +
    'memory, processes, CPU, file size and disk are limited: a tripped limit is an error naming it.',
  input: z.object({
    command: z.string().min(1),
    args: z.array(z.string()).optional(),
    timeout_ms: z.number().int().min(100).max(MAX_TIMEOUT_MS).default(DEFAULT_TIMEOUT_MS),
    env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), z.string()).optional(),
  }),
  scope: 'session',
  capability: 'process.exec',
  async run(i, ctx) {
    const env = { ...ctx.session.commandEnv, ...i.env };
    const spec = {
      command: i.command,
      args: i.args,
      timeoutMs: i.timeout_ms,
      maxOutputBytes: ctx.limits.outputBytes,
      signal: ctx.signal,
      ...(Object.keys(env).length ? { env } : {}),
      // the output reaches the run's stream while the command runs (the result still carries all of it)
      onOutput: (text: string) => ctx.emit(runEvent('tool_output', { toolName: 'run_command', message: text, delta: true })),
    };
    // a sandbox session's commands share its worker's limits: its files, no network of their own
    const network = ctx.session.profile.network === 'enabled' && ctx.session.profile.workerMode !== 'sandbox';
    // a /v1 environment's setup commands reach the runner as run_command with the setup folder in their env
    const scope = env.SVC_SETUP_CWD !== undefined ? 'setup' : 'command';
    const result = await ctx.commands.run(spec, { vfs: ctx.vfs(), network, sessionId: ctx.session.id, tenant: ctx.session.tenant, limits: ctx.limits, scope });
    const { limit } = result;
    const tripped = limit && limit.key !== 'outputBytes';
    const said = result.limitMessage ?? (limit && limitMessage(limit, tripped ? 'killed' : 'the rest truncated'));
    if (limit) ctx.emit(runEvent('limit_exceeded', { toolName: 'run_command', message: said, limit }));
    const failure = tripped
      ? said
      : result.timedOut
      ? `command timed out after ${i.timeout_ms} ms`
      : result.cancelled
        ? 'command cancelled'
        : result.exitCode === null
          ? `command failed: ${result.signal ? `killed by ${result.signal}` : result.stderr || 'could not start'}`
          : result.exitCode !== 0
            ? `command exited with code ${result.exitCode}`
            : undefined;
    if (failure) throw new ToolFailure(failure, { ...result });
    return result;
  },
  text: (r: CommandResult) => [r.stdout, r.stderr && `[stderr]\n${r.stderr}`].filter(Boolean).join('\n') || `[exit code ${r.exitCode}, no output]`,
});

