import { randomUUID } from 'node:crypto';
import type { Config } from '../../../../config/config.ts';
import { runEvent, withTerminal, type RunEvent } from '../../../../contracts/run-event.ts';
import type { WorkerRunRequest } from '../../../../contracts/worker.ts';
import { describeError } from '../../../../shared/errors.ts';
import { createLogger } from '../../../../shared/log.ts';
import type { WorkerRuntime } from '../../runtime.ts';
import { BUNDLE_CONTENT_TYPE, packBundle, unpackBundle } from '../bundle/bundle.ts';
import { userPromptOf } from '../prompt.ts';
import type { HostEnv } from '../sdk/child-env.ts';
import { lazySdk, type SdkLoader } from '../sdk/loader.ts';
import { mcpServersOf } from '../sdk/mcp.ts';
import { forwardTenantServers, type ForwardedServers } from '../sdk/mcp-egress.ts';
import { createSessionStore } from '../sdk/session-store.ts';
import { CANCELLED, settle } from '../sdk/settle.ts';
import { claudeOptions, claudeProviderEnv } from './options.ts';
import { hasTranscript, transcriptFiles, transcriptSessionId } from './transcript.ts';
import { createClaudeTranslator } from './translate.ts';

export const CLAUDE_SDK_PACKAGE = '@anthropic-ai/claude-agent-sdk';
export type ClaudeSdk = Pick<typeof import('@anthropic-ai/claude-agent-sdk'), 'query'>;

const log = createLogger('worker:runtime_a');

export interface RuntimeADeps {
  /** The worker's environment: PATH and `childEnvAllow` names are passed on to Claude Code, nothing else. */
  hostEnv: HostEnv;
  /** Imports the SDK; tests inject a failing one to see the missing-package path. */
  load?: SdkLoader<ClaudeSdk>;
}

/**
 * `runtime_a`: Claude Code through the Claude Agent SDK's `query()`, one child process per run, with per-session
 * folders under `<stateDir>/runtime_a/` and resume by Claude session id. State bundles are the session's transcript.
 * The SDK is imported on first use only. Created by the worker server for MODE runtime_a and all.
 */
export function createRuntimeA(config: Config['worker'], deps: RuntimeADeps): WorkerRuntime {
  const store = createSessionStore(config.stateDir, 'runtime_a');
  const load = lazySdk('runtime_a', CLAUDE_SDK_PACKAGE, deps.load ?? (() => import('@anthropic-ai/claude-agent-sdk')));

  async function* run(req: WorkerRunRequest, signal: AbortSignal): AsyncGenerator<RunEvent> {
    const sdk = await load();
    const providerEnv = claudeProviderEnv(config, req);
    const release = store.lock(req.sessionId);
    // Our own controller: Claude Code must also stop when the run ends early (the reader went away, an error) or
    // lingers after its terminal, not only when the caller's signal aborts.
    const abortController = new AbortController();
    const stop = () => abortController.abort();
    signal.addEventListener('abort', stop, { once: true });
    let lastStderr = ''; // explains a crash better than "exited with code 1"
    let forwarded: ForwardedServers | undefined;
    try {
      const paths = await store.prepare(req.sessionId);
      let runtimeSessionId = await store.runtimeSessionId(req.sessionId);
      if (!runtimeSessionId) {
        runtimeSessionId = randomUUID(); // chosen up front, so the session maps to its transcript even if this run fails
        await store.setRuntimeSessionId(req.sessionId, runtimeSessionId);
      }
      yield runEvent('session', { runtimeSessionId }); // known before Claude Code starts: resumed or pre-assigned
      const listed = mcpServersOf(req);
      for (const note of listed.notes) yield runEvent('progress', { message: note });
      // Claude Code connects MCP servers itself: a tenant's goes through a forwarder under the address policy
      forwarded = await forwardTenantServers(listed.servers, config.privateAddresses);
      const { servers } = forwarded;
      const options = claudeOptions({
        req, config, providerEnv, host: deps.hostEnv, paths, servers, runtimeSessionId, abortController,
        resume: await hasTranscript(paths.config, runtimeSessionId),
        stderr: (chunk) => {
          const line = chunk.trim().split('\n').at(-1);
          if (line) lastStderr = line.slice(0, 500);
        },
      });
      if (signal.aborted) throw new Error(CANCELLED);
      const messages = sdk.query({ prompt: userPromptOf(req), options });
      yield* settle(messages, createClaudeTranslator(runtimeSessionId, servers), {
        signal,
        stop,
        describe: (err) => [describeError(err), lastStderr].filter(Boolean).join(': '),
      });
    } finally {
      signal.removeEventListener('abort', stop);
      stop(); // a run that ended early (client gone, error) must not leave Claude Code running
      await forwarded?.close();
      release();
    }
  }

  return {
    id: 'runtime_a',
    run: (req, signal) => withTerminal(run(req, signal), (err) => (signal.aborted ? CANCELLED : describeError(err))),
    async exportState(sessionId) {
      const runtimeSessionId = await store.runtimeSessionId(sessionId);
      if (!runtimeSessionId) return undefined;
      const files = await transcriptFiles(store.paths(sessionId).config, runtimeSessionId);
      if (!files.some((f) => f.path.endsWith('.jsonl'))) return undefined;
      return { contentType: BUNDLE_CONTENT_TYPE, runtimeSessionId, body: packBundle(files) };
    },
    async importState(sessionId, body) {
      const files = unpackBundle(body);
      const runtimeSessionId = transcriptSessionId(files); // validate everything before touching the disk
      const release = store.lock(sessionId);
      try {
        await store.replace(sessionId, files, runtimeSessionId);
        log.info('session imported', { sessionId, runtimeSessionId, files: files.length });
      } finally {
        release();
      }
    },
    async close() {},
  };
}
