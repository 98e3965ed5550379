import OpenAI from 'openai';
import { EventSourceParserStream } from 'eventsource-parser/stream';
import { insertKey, type Role } from '../../src/modules/conductor/identity/index.ts';
import { fakeProviderEnv, startFakeProvider, type FakeProvider } from './fake-provider.ts';
import { startTestSvc, type TestSvc } from './svc.ts';

/**
 * An svc instance (role all) for the /v1 agents API tests, driven by the real `openai` 7.15.0 package: a fake model
 * provider behind the `svc/fake/<id>` aggregator, keys of other roles and organisations minted through the identity
 * module, and a raw SSE reader for the wire-level checks the SDK hides (`id:`, `event:`, comments).
 */
export const PEPPER = 'agents-test-pepper-0123456789';
export const FAKE_MODEL = 'svc/fake/fake-model';

export interface AgentsHarness {
  svc: TestSvc;
  fake: FakeProvider;
  client: OpenAI;
  clientFor(key: string, opts?: { maxRetries?: number }): OpenAI;
  mintKey(tenantId: string, role: Role): Promise<string>;
  /** Creates organisation `id` (through the operator routes) and returns an owner key of it. */
  otherOrg(id: string): Promise<string>;
  stop(): Promise<void>;
}

export async function startAgentsHarness(env: Record<string, string> = {}, opts: { databaseUrl?: string; port?: number; role?: string } = {}): Promise<AgentsHarness> {
  const fake = await startFakeProvider();
  const svc = await startTestSvc(
    {
      DATABASE_URL: opts.databaseUrl ?? 'memory',
      AGENT_API_KEY_PEPPER: PEPPER,
      AGENT_ORC_ADMIN_TENANT: 'default',
      // every provider's address is the fake; keys are the organisation's own (PUT /api/providers/<provider>/key)
      ...Object.fromEntries(Object.entries(fakeProviderEnv(fake)).filter(([name]) => name.endsWith('_BASE_URL'))),
      OPENAI_COMPATIBLE_API_KEY: 'x',
      SVC_AGGREGATOR_FAKE_URL: fake.url,
      SVC_AGGREGATOR_FAKE_KEY: 'fake-aggregator-key',
      ...env,
    },
    opts.role ?? 'all',
    opts.port !== undefined ? { port: opts.port } : {},
  );
  const clientFor = (key: string, o: { maxRetries?: number } = {}) => new OpenAI({ baseURL: `${svc.url}/v1`, apiKey: key, maxRetries: o.maxRetries ?? 0 });
  const mintKey = async (tenantId: string, role: Role) => {
    const db = svc.server.built.database!.db;
    return (await insertKey({ db, pepper: PEPPER, keyEnv: 'test' }, tenantId, { name: role, role, createdBy: null, expiresAt: null })).token;
  };
  return {
    svc,
    fake,
    client: clientFor(svc.key),
    clientFor,
    mintKey,
    async otherOrg(id) {
      const res = await svc.api('/api/tenants', { method: 'POST', json: { id, name: id } });
      if (res.status !== 201) throw new Error(`creating tenant ${id}: ${res.status} ${await res.text()}`);
      return mintKey(id, 'owner');
    },
    async stop() {
      await svc.stop();
      await fake.close();
    },
  };
}

export interface RawFrame {
  id: string | undefined;
  event: string | undefined;
  data: any;
}

/** `GET …/events` over plain fetch; `frames` fill as they arrive, `text` keeps the raw bytes for wire checks. */
export function rawEvents(h: AgentsHarness, sessionId: string, headers: Record<string, string> = {}) {
  const controller = new AbortController();
  const frames: RawFrame[] = [];
  let text = '';
  const waiters = new Set<() => void>();
  const response = fetch(`${h.svc.url}/v1/agents/sessions/${sessionId}/events`, {
    headers: { authorization: `Bearer ${h.svc.key}`, accept: 'text/event-stream', 'openai-beta': 'agents=v1', ...headers },
    signal: controller.signal,
  });
  const done = (async () => {
    const res = await response;
    if (!res.ok || !res.body) return;
    const [a, b] = res.body.tee();
    void (async () => {
      const decoder = new TextDecoder();
      try {
        for await (const chunk of b) text += decoder.decode(chunk as Uint8Array, { stream: true });
      } catch {
        // aborted
      }
    })();
    try {
      for await (const f of a.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream())) {
        frames.push({ id: f.id, event: f.event, data: JSON.parse(f.data) });
        waiters.forEach((w) => w());
      }
    } catch {
      // aborted
    }
  })();
  return {
    response,
    frames,
    get text() {
      return text;
    },
    /** Resolves with the first frame (in arrival order) matching `pred`. */
    until(pred: (f: RawFrame) => boolean): Promise<RawFrame> {
      return new Promise((resolve) => {
        const check = () => {
          const hit = frames.find(pred);
          if (hit) {
            waiters.delete(check);
            resolve(hit);
          }
        };
        waiters.add(check);
        check();
      });
    },
    close() {
      controller.abort();
      return done;
    },
  };
}

/** Iterates an SDK stream until `stop` matches (inclusive) and returns what it saw. */
export async function collect<T>(stream: AsyncIterable<T>, stop: (e: T) => boolean = () => false): Promise<T[]> {
  const out: T[] = [];
  for await (const e of stream) {
    out.push(e);
    if (stop(e)) break;
  }
  return out;
}

/** Reads one SDK stream in several steps (an SDK Stream can be iterated only once). */
export function reader<T>(stream: AsyncIterable<T>) {
  const it = stream[Symbol.asyncIterator]();
  return {
    async until(stop: (e: T) => boolean): Promise<T[]> {
      const out: T[] = [];
      for (;;) {
        const next = await it.next();
        if (next.done) return out;
        out.push(next.value);
        if (stop(next.value)) return out;
      }
    },
    close: async () => void (await it.return?.()),
  };
}

/** The concatenated `output_text.delta`s of a list of events. */
export const textOf = (events: Array<{ type: string; delta?: unknown }>) =>
  events.filter((e) => e.type === 'agent.session.turn.output_text.delta').map((e) => e.delta).join('');

export const isTurnEnd = (e: { type: string }) =>
  e.type === 'agent.session.turn.completed' || e.type === 'agent.session.turn.failed' || e.type === 'agent.session.turn.cancelled';
