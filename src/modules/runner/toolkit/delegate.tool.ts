import { z } from 'zod';
import type { PoolSpec } from '../../../contracts/runner.wire.ts';
import { describeError } from '../../../shared/errors.ts';
import { defineTool, ToolFailure } from './tool.ts';

/**
 * `delegate`: hand a subtask to another profile of a pool the caller's profile belongs to. The child run is created
 * through the conductor (`POST /api/runs` with `parentId` = the current run), so it is billed, logged and visible
 * like any run; the tool waits for its terminal event and returns its result text. Cancelling the caller's run
 * cancels the child too.
 */
export function delegationProblem(pools: readonly PoolSpec[], caller: string, target: string): string | undefined {
  if (caller === target) return `profile ${caller} cannot delegate to itself`;
  const isIn = (p: PoolSpec, profile: string) => p.members?.some((m) => m.profile === profile) ?? false;
  const mine = pools.filter((p) => isIn(p, caller));
  if (mine.length === 0) return `profile ${caller} is in no pool; delegation is only between members of one pool`;
  if (!mine.some((p) => isIn(p, target))) return `profile ${target} is not in a pool with ${caller} (pools of ${caller}: ${mine.map((p) => p.name).join(', ')})`;
  return undefined;
}

export const delegateTool = defineTool({
  name: 'delegate',
  description: 'Delegate a subtask to another profile of your pool; waits for that run and returns its result.',
  input: z.object({
    profile: z.string().min(1).describe('name of a profile in the same pool'),
    prompt: z.string().min(1),
    title: z.string().max(200).optional(),
  }),
  scope: 'pool',
  capability: 'runs.delegate',
  async run(i, ctx) {
    const caller = ctx.session.profile.name;
    const problem = delegationProblem(ctx.pools, caller, i.profile);
    if (problem) throw new ToolFailure(problem);
    const { runToken, activeRunId } = ctx.session;
    if (!runToken || !activeRunId) throw new ToolFailure('delegate needs a run started by the conductor (this session has no run token)');
    if (!ctx.conductor) throw new ToolFailure('delegate is unavailable: this runner has no conductor configured (SVC_CONDUCTOR_URL)');
    const conductor = ctx.conductor;

    const child = await conductor.startRun(runToken, { profile: i.profile, parentId: activeRunId, prompt: i.prompt, title: i.title ?? `delegated by ${caller}` }, ctx.signal);
    // the run's token of the moment: the child may run longer than the token the call started with lives
    const cancelChild = () => void conductor.cancelRun(ctx.session.runToken ?? runToken, child.runId).catch(() => {});
    ctx.signal.addEventListener('abort', cancelChild, { once: true });
    try {
      for await (const event of conductor.runEvents(runToken, child.runId, ctx.signal)) {
        if (event.type === 'result') return { runId: child.runId, sessionId: child.sessionId, profile: i.profile, status: 'ok', result: event.message ?? '' };
        if (event.type === 'error') throw new ToolFailure(`delegated run ${child.runId} failed: ${event.message ?? 'no message'}`, { runId: child.runId, sessionId: child.sessionId });
      }
    } catch (err) {
      if (err instanceof ToolFailure) throw err;
      throw new ToolFailure(`delegated run ${child.runId}: ${describeError(err)}`, { runId: child.runId, sessionId: child.sessionId });
    } finally {
      ctx.signal.removeEventListener('abort', cancelChild);
    }
    throw new ToolFailure(`delegated run ${child.runId} ended without a result`);
  },
  text: (v: { result: string }) => v.result,
});
