import { defineCommand } from 'citty';
import { text } from 'node:stream/consumers';
import { globalArgs } from './args.ts';
import { failure, usageError, whenInterrupted } from './client/exit.ts';
import { createRenderer } from './client/run/render.ts';
import { followRun } from './client/run/stream.ts';
import { openSession } from './client/session.ts';
import { confirm } from './client/prompt.ts';

/**
 * `svc run <profile> "<prompt>"`: starts a run (POST /api/runs) and streams its events to the terminal; `--json`
 * prints NDJSON (a `run` line with the ids, then one line per event). Exit 1 when the run ends in error; Ctrl-C
 * cancels the run (DELETE /api/runs/{id}) and exits 130.
 */
export default defineCommand({
  meta: { name: 'run', description: 'Run a profile on a prompt and stream its output' },
  args: {
    ...globalArgs,
    profile: { type: 'positional', description: 'the profile to run' },
    prompt: { type: 'positional', description: 'the prompt ("-" reads it from stdin)' },
    session: { type: 'string', description: 'continue this session instead of starting a new one', valueHint: 'id' },
    title: { type: 'string', description: 'a title for the run' },
    multitask: { type: 'string', description: 'when the session is busy: reject (default), enqueue or interrupt', valueHint: 'strategy' },
  },
  async run({ args }) {
    let prompt = String(args.prompt);
    const { env, out, api } = openSession(args, { needKey: true });
    if (prompt === '-') prompt = (await text(process.stdin)).trim();
    if (!prompt) throw usageError('the prompt is empty');
    const body = { profile: String(args.profile), prompt, ...(args.session ? { sessionId: args.session } : {}), ...(args.title ? { title: args.title } : {}), ...(args.multitask ? { multitask: args.multitask } : {}) };
    const { data: started } = await api.request<{ runId: string; sessionId: string }>('POST', '/api/runs', { body });
    const abort = new AbortController();
    const render = createRenderer(out, { spinner: !out.json && env.stdoutTTY });
    const dispose = whenInterrupted(async () => {
      render.stop();
      abort.abort();
      await api.request('DELETE', `/api/runs/${encodeURIComponent(started.runId)}`, { timeoutMs: 3000 }).then(
        () => out.log.info(`cancelled run ${started.runId}`),
        (err) => out.log.warn(`could not cancel run ${started.runId}: ${err instanceof Error ? err.message : String(err)}`),
      );
    });
    if (out.json) out.line({ event: 'run', runId: started.runId, sessionId: started.sessionId });
    else out.log.debug(`run ${started.runId} on session ${started.sessionId}`);
    let terminal: { type: string; message?: string } | undefined;
    /** A tool under an `ask` permission: on a terminal, asked here; otherwise the command that decides it is named. */
    const askInline = async (runId: string, approvalId: string, tool: string) => {
      if (!env.stdinTTY || !env.stdoutTTY) return out.log.info(`decide with: svc approve ${approvalId} [--deny] [--message text]`);
      const approve = await confirm(`Allow ${tool}?`, false);
      const path = `/api/runs/${encodeURIComponent(runId)}/approvals/${encodeURIComponent(approvalId)}`;
      await api.request('POST', path, { body: { decision: approve ? 'approve' : 'deny', ...(approve ? {} : { message: 'denied at the terminal' }) } }).catch((err) =>
        out.log.warn(`could not record the decision: ${err instanceof Error ? err.message : String(err)}`),
      );
    };
    try {
      for await (const event of followRun(api, started.runId, abort.signal)) {
        if (out.json) out.line(event);
        else render.event(event);
        if (event.type === 'approval_required' && event.approvalId && !out.json) await askInline(started.runId, event.approvalId, String(event.toolName));
        if (event.type === 'result' || event.type === 'error') terminal = event;
      }
    } finally {
      render.stop();
      dispose();
    }
    if (terminal?.type === 'error') throw failure(`run ${started.runId} failed: ${terminal.message ?? 'error'}`);
    if (!out.json) out.log.success(`run ${started.runId} finished (session ${started.sessionId}; continue with --session ${started.sessionId})`);
  },
});
