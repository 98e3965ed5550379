import type { Config } from '../../src/config/config.ts';
import type { RunEvent } from '../../src/contracts/run-event.ts';
import type { WorkerRunRequest } from '../../src/contracts/worker.ts';
import { readNdjson } from '../../src/shared/ndjson.ts';
import { createWorker, type Worker, type WorkerDeps } from '../../src/modules/worker/index.ts';
import { listen } from './listen.ts';

/** Test helpers for the agent-worker: a worker on a real port, a run body, and a run read to its end. */
export function workerConfig(overrides: Partial<Config['worker']> = {}): Config['worker'] {
  return {
    mode: 'general',
    stateDir: '/nonexistent/svc-state',
    stepCount: 8,
    modelStallTimeoutMs: 60_000,
    childEnvAllow: [],
    hostEnv: { PATH: process.env.PATH ?? '' },
    allowHostTools: false,
    runnerUrl: undefined,
    workerToken: undefined,
    sessionId: undefined,
    protocol: 1,
    providerEnv: {},
    ...overrides,
  };
}

export interface TestWorker {
  url: string;
  worker: Worker;
  close(): Promise<void>;
}

export async function startTestWorker(overrides: Partial<Config['worker']> = {}, deps: Omit<WorkerDeps, 'config'> = {}): Promise<TestWorker> {
  const worker = createWorker({ config: workerConfig(overrides), ...deps });
  const http = await listen(worker.app.fetch);
  return {
    url: http.url,
    worker,
    async close() {
      await worker.close();
      await http.close();
    },
  };
}

/** A closed port: connecting fails at once, like a runner whose session MCP endpoint is not there. */
export const NO_MCP = 'http://127.0.0.1:1/mcp';

export function runBody(prompt: string, overrides: { sessionId?: string; model?: string; sessionMcpUrl?: string; profile?: Partial<WorkerRunRequest['profile']>; mcpServers?: WorkerRunRequest['mcpServers']; skills?: WorkerRunRequest['skills'] } = {}): WorkerRunRequest {
  return {
    sessionId: overrides.sessionId ?? 'sess-test-1',
    profile: { name: 'tester', runtime: 'general', model: overrides.model ?? 'demo:echo', ...overrides.profile },
    subtask: { title: 'test', prompt },
    sessionMcpUrl: overrides.sessionMcpUrl ?? NO_MCP,
    ...(overrides.mcpServers ? { mcpServers: overrides.mcpServers } : {}),
    ...(overrides.skills ? { skills: overrides.skills } : {}),
  };
}

export function postRun(url: string, body: unknown, signal?: AbortSignal): Promise<Response> {
  return fetch(`${url}/run`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal });
}

/** Posts a run and reads every event until the worker closes the stream. */
export async function runToEnd(url: string, body: unknown): Promise<RunEvent[]> {
  const res = await postRun(url, body);
  if (res.status !== 200 || !res.body) throw new Error(`run answered ${res.status}: ${await res.text()}`);
  const events: RunEvent[] = [];
  for await (const event of readNdjson<RunEvent>(res.body)) events.push(event);
  return events;
}

export const ofType = (events: readonly RunEvent[], type: RunEvent['type']) => events.filter((e) => e.type === type);
export const deltaText = (events: readonly RunEvent[]) => ofType(events, 'assistant').filter((e) => e.delta).map((e) => e.message).join('');

export async function exportState(url: string, sessionId: string, query = ''): Promise<Response> {
  return fetch(`${url}/state/${encodeURIComponent(sessionId)}${query}`);
}

export async function importState(url: string, sessionId: string, body: string | Uint8Array, query = ''): Promise<Response> {
  const contentType = typeof body === 'string' ? 'application/json' : 'application/gzip';
  return fetch(`${url}/state/${encodeURIComponent(sessionId)}${query}`, { method: 'POST', headers: { 'content-type': contentType }, body: body as BodyInit });
}
