import { defineCommand } from 'citty';
import { EventSourceParserStream } from 'eventsource-parser/stream';
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { globalArgs, limitArg } from './args.ts';
import { failure, usageError, whenInterrupted } from './client/exit.ts';
import { NetworkError, type Api } from './client/http.ts';
import { printList, readLimit } from './client/list.ts';
import type { Output } from './client/output.ts';
import { workflowDefinitionId, workflowRunId } from './client/names.ts';
import { openSession } from './client/session.ts';

/**
 * `svc workflows run -f <file.json> | list | get | cancel`: /api/workflows/runs from the command line. `run` creates the
 * run unstarted, opens its plan stream, starts it, and prints every transition (`--json`: NDJSON of the events); exit 1
 * unless it completes (a paused run ends the command: it waits for a repair); Ctrl-C cancels it.
 */
interface NodeRecord {
  id: string;
  profile: string;
  statusLabel: string;
  dependsOn: string[];
  runId: string | null;
  output: string | null;
  error: string | null;
}
interface WorkflowRecord {
  id: string;
  name: string;
  status: number | string;
  statusLabel: string;
  nodes: NodeRecord[];
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
}
interface PlanEvent {
  change?: { nodeId?: string; status: number; statusLabel: string };
  workflowRun: WorkflowRecord;
}

const enc = encodeURIComponent;
const TERMINAL = new Set(['completed', 'failed', 'cancelled']);
const idArg = { id: { type: 'positional', description: 'the workflow run: its id, or its name (the newest run of that name)', required: true } } as const;

function printRun(out: Output, w: WorkflowRecord): void {
  if (out.json) return out.data(w);
  out.fields([
    ['id', w.id],
    ['name', w.name || null],
    ['status', w.statusLabel],
    ['createdAt', w.createdAt],
    ['startedAt', w.startedAt],
    ['finishedAt', w.finishedAt],
  ]);
  out.rows(w.nodes.map((n) => [n.id, n.profile, n.statusLabel, n.dependsOn.join(',') || '-', n.runId ?? '-', n.error ?? '']), ['node', 'profile', 'status', 'depends on', 'run', 'error']);
}

/** The plan stream to its terminal status; a dropped connection resumes with Last-Event-ID, a few times. */
async function* followPlan(api: Api, id: string, signal: AbortSignal): AsyncGenerator<{ event: string; data: PlanEvent }> {
  let last: string | undefined;
  let failures = 0;
  for (;;) {
    try {
      const res = await api.raw('GET', `/api/workflows/runs/${enc(id)}/stream`, { signal, accept: 'text/event-stream', headers: last ? { 'last-event-id': last } : undefined });
      for await (const frame of res.body!.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream())) {
        if (frame.id) last = frame.id;
        failures = 0;
        const data = JSON.parse(frame.data) as PlanEvent;
        yield { event: frame.event ?? 'message', data };
      }
      return; // the server ends the stream after the terminal status
    } catch (err) {
      if (signal.aborted) throw err;
      if (!(err instanceof NetworkError || (err instanceof TypeError && /terminated|fetch failed/i.test(err.message)))) throw err;
    }
    if (++failures > 5) throw new NetworkError(api.baseUrl, `the stream of workflow run ${id} broke off and could not be resumed`);
    await sleep(200 * failures, undefined, { signal });
  }
}

export default defineCommand({
  meta: { name: 'workflows', description: 'DAGs of agent steps' },
  subCommands: {
    run: defineCommand({
      meta: { name: 'run', description: 'Start a workflow from a JSON file ({name?, nodes | definitionId, input?}) or a saved definition, and stream its plan' },
      args: {
        ...globalArgs,
        file: { type: 'string', alias: 'f', description: 'the workflow run body (JSON)', valueHint: 'file.json' },
        definition: { type: 'string', description: 'a saved workflow definition, by name or id (instead of -f)', valueHint: 'name' },
      },
      async run({ args }) {
        if (!args.file === !args.definition) throw usageError('one of -f <file.json> or --definition <name> is required');
        let body: unknown;
        if (args.file) {
          try {
            body = JSON.parse(await readFile(String(args.file), 'utf8'));
          } catch (err) {
            throw usageError(`-f ${args.file}: ${err instanceof Error ? err.message : String(err)}`);
          }
        }
        const { out, api } = openSession(args, { needKey: true });
        if (args.definition) body = { definitionId: await workflowDefinitionId(api, args.definition) };
        const { data } = await api.request<{ workflowRun: WorkflowRecord }>('POST', '/api/workflows/runs', { body: { ...(body as object), autoStart: false } });
        const id = data.workflowRun.id;
        const abort = new AbortController();
        const dispose = whenInterrupted(async () => {
          abort.abort();
          await api.request('POST', `/api/workflows/runs/${enc(id)}/cancel`, { timeoutMs: 3000 }).then(
            () => out.log.info(`cancelled workflow run ${id}`),
            (err) => out.log.warn(`could not cancel workflow run ${id}: ${err instanceof Error ? err.message : String(err)}`),
          );
        });
        if (out.json) out.line({ event: 'workflowRun', workflowRun: data.workflowRun });
        else out.log.info(`workflow run ${id}`);
        let final: WorkflowRecord = data.workflowRun;
        try {
          for await (const { event, data: e } of followPlan(api, id, abort.signal)) {
            final = e.workflowRun;
            // created unstarted and started once the stream is open, so every transition is seen
            if (event === 'snapshot' && final.statusLabel === 'pending') await api.request('POST', `/api/workflows/runs/${enc(id)}/start`);
            if (out.json) out.line({ event, ...e });
            else if (e.change) {
              const n = e.change.nodeId ? final.nodes.find((x) => x.id === e.change!.nodeId) : undefined;
              out.text(n ? `node ${n.id}: ${e.change.statusLabel}${n.error && e.change.statusLabel === 'error' ? ` (${n.error})` : ''}` : `workflow: ${e.change.statusLabel}`);
            }
            // a paused run waits for a repair: stop following rather than hang
            if (final.statusLabel === 'paused') break;
          }
        } finally {
          dispose();
        }
        if (final.statusLabel === 'paused') {
          const failed = final.nodes.filter((n) => n.statusLabel === 'error').map((n) => n.id);
          throw failure(`workflow run ${id} paused: node ${failed.join(', ')} failed`, `repair it (POST /api/workflows/runs/${id}/repair) or cancel it (svc workflows cancel ${id})`);
        }
        if (!TERMINAL.has(final.statusLabel)) throw failure(`the stream of workflow run ${id} ended while it was ${final.statusLabel}`);
        if (final.statusLabel !== 'completed') throw failure(`workflow run ${id} ${final.statusLabel}`);
        if (!out.json) out.log.success(`workflow run ${id} completed`);
      },
    }),
    list: defineCommand({
      meta: { name: 'list', description: 'List workflow runs, newest first' },
      args: { ...globalArgs, ...limitArg, status: { type: 'string', description: 'pending, running, paused, completed, failed or cancelled' }, name: { type: 'string', description: 'only runs with this name' } },
      async run({ args }) {
        const { out, api } = openSession(args, { needKey: true });
        const q = [`limit=${Math.min(200, readLimit(args.limit))}`, ...(args.status ? [`status=${enc(args.status)}`] : []), ...(args.name ? [`name=${enc(args.name)}`] : [])].join('&');
        const items = await api.get<WorkflowRecord[]>(`/api/workflows/runs?${q}`);
        printList(out, items, (w) => [w.id, w.name || '-', w.statusLabel, w.createdAt, w.finishedAt ?? '-'], ['id', 'name', 'status', 'created', 'finished']);
      },
    }),
    get: defineCommand({
      meta: { name: 'get', description: 'Show a workflow run and its nodes' },
      args: { ...globalArgs, ...idArg },
      async run({ args }) {
        const { out, api } = openSession(args, { needKey: true });
        printRun(out, (await api.get<{ workflowRun: WorkflowRecord }>(`/api/workflows/runs/${enc(await workflowRunId(api, args.id))}`)).workflowRun);
      },
    }),
    cancel: defineCommand({
      meta: { name: 'cancel', description: 'Cancel a workflow run, its pending and running nodes and their runs' },
      args: { ...globalArgs, ...idArg },
      async run({ args }) {
        const { out, api } = openSession(args, { needKey: true });
        printRun(out, (await api.request<{ workflowRun: WorkflowRecord }>('POST', `/api/workflows/runs/${enc(await workflowRunId(api, args.id))}/cancel`)).data.workflowRun);
      },
    }),
  },
});
