import { spawn, type ChildProcess } from 'node:child_process';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { McpServerSpec } from '../../../contracts/worker.ts';
import { describeError } from '../../../shared/errors.ts';
import { runEvent } from '../../../contracts/run-event.ts';
import type { Jail, Limiter } from '../limits/index.ts';
import type { Sandbox } from '../sandbox/index.ts';
import type { SessionRecord } from '../sessions/sessions.store.ts';
import type { VfsView } from '../vfs/index.ts';

/**
 * stdio MCP servers of a run (the /v1 agents API's `{type: "mcp", transport: {type: "stdio"}}`): started for the run
 * inside the session's sandbox — the same bubblewrap sandbox as `run_command`, with the session's files (the
 * environment's `/workspace` is its `/work`), no network unless the profile allows it, a minimal environment plus the
 * server's own `env` — and stopped with the run (their process group is killed). The worker reaches each through the
 * runner's `/runner/sessions/{id}/mcp/stdio/{name}` endpoint (mcp.routes.ts), which relays to the MCP client here.
 * Each server runs in a jail of the session's limits (limits/); one the kernel ends for a limit is a
 * `limit_exceeded` event of the run (scope `mcp`), and its tool calls fail from then on.
 */
export interface StdioServer {
  name: string;
  client: Client;
}

export interface StdioMcpHost {
  /** Starts the run's stdio servers; throws (with the server's name and stderr) when one cannot start. */
  open(rec: SessionRecord, runId: string, specs: readonly McpServerSpec[]): Promise<void>;
  /** The live server `name` of the session's current run. */
  find(sessionId: string, name: string): StdioServer | undefined;
  close(runId: string): Promise<void>;
}

/** The MCP SDK's client, imported with the first stdio server: its schemas cost about 30 ms of CPU at every boot otherwise. */
type Sdk = [typeof import('@modelcontextprotocol/sdk/client/index.js'), typeof import('@modelcontextprotocol/sdk/shared/stdio.js')];
let sdk: Promise<Sdk> | undefined;
const loadSdk = () => (sdk ??= Promise.all([import('@modelcontextprotocol/sdk/client/index.js'), import('@modelcontextprotocol/sdk/shared/stdio.js')]));

const PATH = '/usr/local/bin:/usr/bin:/bin';
const START_TIMEOUT_MS = 15_000;

/** An MCP transport over a child process's stdin/stdout (newline-delimited JSON-RPC, the MCP stdio framing). */
function childTransport(child: ChildProcess, { ReadBuffer, serializeMessage }: Sdk[1]): Transport {
  const buffer = new ReadBuffer();
  const t: Transport = {
    async start() {
      child.stdout!.on('data', (chunk: Buffer) => {
        buffer.append(chunk);
        for (;;) {
          let message: JSONRPCMessage | null;
          try {
            message = buffer.readMessage();
          } catch (err) {
            t.onerror?.(err as Error);
            continue;
          }
          if (!message) break;
          t.onmessage?.(message);
        }
      });
      child.on('close', () => t.onclose?.());
      child.on('error', (err) => t.onerror?.(err));
    },
    send(message) {
      return new Promise((resolve, reject) => {
        if (!child.stdin!.writable) return reject(new Error('the MCP server process has exited'));
        child.stdin!.write(serializeMessage(message), (err) => (err ? reject(err) : resolve()));
      });
    },
    async close() {
      child.stdin!.end();
    },
  };
  return t;
}

/** `/workspace…` (the environment's paths) is the session's `/work…` inside the sandbox. */
function sandboxCwd(cwd: string | undefined, work: string): string {
  if (!cwd || cwd === '/workspace') return work;
  if (cwd.startsWith('/workspace/')) return `${work}${cwd.slice('/workspace'.length)}`;
  return cwd;
}

export function createStdioMcpHost(deps: { sandbox: Sandbox; limiter?: Limiter; view: (rec: SessionRecord) => VfsView; version: string }): StdioMcpHost {
  const byRun = new Map<string, { sessionId: string; servers: Map<string, StdioServer & { child: ChildProcess }> }>();
  const stopped = new WeakSet<ChildProcess>();

  const kill = (child: ChildProcess) => {
    stopped.add(child);
    try {
      if (child.pid) process.kill(-child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  };

  /** A server's end: its jail's verdict (a limit becomes an event of the session's run), then the jail goes. */
  function watchJail(rec: SessionRecord, spec: McpServerSpec, child: ChildProcess, jail: Jail): Promise<string | undefined> {
    return new Promise((resolve) => {
      child.once('close', (code, signal) => {
        void (async () => {
          const v = stopped.has(child) ? {} : await jail.verdict({ code, signal }).catch(() => ({ limit: undefined, message: undefined }));
          await jail.close();
          resolve(v.message);
          if (!v.limit) return;
          deps.limiter?.tripped(v.limit);
          rec.runOutput?.(runEvent('limit_exceeded', { toolName: spec.name, message: `stdio MCP server ${spec.name}: ${v.message}`, limit: v.limit }));
        })();
      });
    });
  }

  async function startOne(rec: SessionRecord, spec: McpServerSpec): Promise<StdioServer & { child: ChildProcess }> {
    const [{ Client }, stdio] = await loadSdk();
    const status = await deps.sandbox.ready();
    const view = deps.view(rec);
    const argv: [string, ...string[]] = [spec.command!, ...(spec.args ?? [])];
    await deps.limiter?.ready();
    const refused = deps.limiter?.refusal();
    if (refused) throw new Error(`stdio MCP server ${spec.name} is refused on this runner: ${refused}`);
    const jail = deps.limiter?.jail({ sessionId: rec.id, tenant: rec.tenant, scope: 'mcp', limits: deps.limiter.limitsOf(rec.profile) });
    let child: ChildProcess;
    if (status.mode === 'off') {
      const work = await view.workDir();
      const env = { PATH, HOME: work, TMPDIR: work, LANG: 'C.UTF-8', ...spec.env };
      const [file, ...args] = jail ? jail.enter(jail.rlimit(argv, { nproc: false })) : argv;
      child = spawn(file, args, { cwd: sandboxCwd(spec.cwd, work), env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    } else {
      if (!status.available) throw new Error(`the sandbox is unavailable on this runner: ${status.detail}`);
      const plan = await view.sandboxMounts();
      try {
        const env = { PATH, HOME: plan.home, TMPDIR: '/tmp', LANG: 'C.UTF-8', ...spec.env };
        const network = rec.profile.network === 'enabled';
        child = deps.sandbox.spawn({ argv, cwd: sandboxCwd(spec.cwd, plan.cwd), env, mounts: plan.mounts, network }, { stdio: ['pipe', 'pipe', 'pipe'], detached: true, jail });
      } finally {
        plan.close();
      }
    }
    const ended = jail ? watchJail(rec, spec, child, jail) : Promise.resolve(undefined);
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString('utf8')).slice(-2000)));
    const client = new Client({ name: 'svc-runner', version: deps.version });
    try {
      await client.connect(childTransport(child, stdio), { signal: AbortSignal.timeout(START_TIMEOUT_MS) });
    } catch (err) {
      // a server that died on its own may have met a limit: that is the reason to give
      const died = child.exitCode !== null || child.signalCode !== null;
      if (!died) kill(child);
      const limit = died ? await ended : undefined;
      throw new Error(`stdio MCP server ${spec.name} did not start: ${limit ?? describeError(err)}${stderr.trim() ? ` (stderr: ${stderr.trim()})` : ''}`);
    }
    return { name: spec.name, client, child };
  }

  return {
    async open(rec, runId, specs) {
      const servers = new Map<string, StdioServer & { child: ChildProcess }>();
      byRun.set(runId, { sessionId: rec.id, servers });
      for (const spec of specs) servers.set(spec.name, await startOne(rec, spec));
    },
    find(sessionId, name) {
      for (const run of byRun.values()) if (run.sessionId === sessionId && run.servers.has(name)) return run.servers.get(name);
      return undefined;
    },
    async close(runId) {
      const run = byRun.get(runId);
      byRun.delete(runId);
      for (const s of run?.servers.values() ?? []) {
        await s.client.close().catch(() => {});
        kill(s.child);
      }
    },
  };
}
