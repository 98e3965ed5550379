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
import { codexOptions, codexProviderEnv, threadOptions } from './options.ts';
import { lastTotals, rolloutBundleThreadId, rolloutFiles } from './rollout.ts';
import { createCodexTranslator } from './translate.ts';

export const CODEX_SDK_PACKAGE = '@openai/codex-sdk';
export type CodexSdk = Pick<typeof import('@openai/codex-sdk'), 'Codex'>;

const log = createLogger('worker:runtime_b');

export interface RuntimeBDeps {
  /** The worker's environment: PATH and `childEnvAllow` names are passed on to Codex, nothing else. */
  hostEnv: HostEnv;
  /** Imports the SDK; tests inject a failing one to see the missing-package path. */
  load?: SdkLoader<CodexSdk>;
}

/**
 * `runtime_b`: the Codex CLI through `@openai/codex-sdk`, one `codex exec` child per turn, with a CODEX_HOME per
 * session under `<stateDir>/runtime_b/` and resume by thread id. State bundles are the thread's rollout files.
 * The SDK is imported on first use only. Created by the worker server for MODE runtime_b and all.
 */
export function createRuntimeB(config: Config['worker'], deps: RuntimeBDeps): WorkerRuntime {
  const store = createSessionStore(config.stateDir, 'runtime_b');
  const load = lazySdk('runtime_b', CODEX_SDK_PACKAGE, deps.load ?? (() => import('@openai/codex-sdk')));

  async function* run(req: WorkerRunRequest, signal: AbortSignal): AsyncGenerator<RunEvent> {
    const { Codex } = await load();
    const providerEnv = codexProviderEnv(config, req);
    const release = store.lock(req.sessionId);
    // Our own controller: the child must also stop when the run ends early (the reader went away, an error) or
    // lingers after its terminal, not only when the caller's signal aborts.
    const abortController = new AbortController();
    const stop = () => abortController.abort();
    signal.addEventListener('abort', stop, { once: true });
    let forwarded: ForwardedServers | undefined;
    try {
      const paths = await store.prepare(req.sessionId); // CODEX_HOME must exist before codex starts
      const listed = mcpServersOf(req);
      for (const note of listed.notes) yield runEvent('progress', { message: note });
      // Codex connects MCP servers itself: a tenant's goes through a forwarder under the address policy
      forwarded = await forwardTenantServers(listed.servers, config.privateAddresses);
      const { servers } = forwarded;
      const input = { req, config, providerEnv, host: deps.hostEnv, paths, servers };
      const codex = new Codex(codexOptions(input));
      const known = await store.runtimeSessionId(req.sessionId);
      const rollouts = known ? await rolloutFiles(paths.config, known) : [];
      const thread = rollouts.length ? codex.resumeThread(known!, threadOptions(input)) : codex.startThread(threadOptions(input));
      let threadId: string | undefined;
      const translate = createCodexTranslator({ before: lastTotals(rollouts), servers, onThreadId: (id) => (threadId = id) });
      if (signal.aborted) throw new Error(CANCELLED);
      const { events } = await thread.runStreamed(userPromptOf(req), { signal: abortController.signal });
      let saved = known;
      for await (const event of settle(events, translate, { signal, stop, describe: describeError })) {
        if (threadId && threadId !== saved) {
          await store.setRuntimeSessionId(req.sessionId, threadId); // a new thread: map the session to it before going on
          saved = threadId;
        }
        yield event;
      }
    } finally {
      signal.removeEventListener('abort', stop);
      stop();
      await forwarded?.close();
      release();
    }
  }

  return {
    id: 'runtime_b',
    run: (req, signal) => withTerminal(run(req, signal), (err) => (signal.aborted ? CANCELLED : describeError(err))),
    async exportState(sessionId) {
      const threadId = await store.runtimeSessionId(sessionId);
      if (!threadId) return undefined;
      const files = await rolloutFiles(store.paths(sessionId).config, threadId);
      if (files.length === 0) return undefined;
      return { contentType: BUNDLE_CONTENT_TYPE, runtimeSessionId: threadId, body: packBundle(files) };
    },
    async importState(sessionId, body) {
      const files = unpackBundle(body);
      const threadId = rolloutBundleThreadId(files); // validate everything before touching the disk
      const release = store.lock(sessionId);
      try {
        await store.replace(sessionId, files, threadId);
        log.info('session imported', { sessionId, threadId, files: files.length });
      } finally {
        release();
      }
    },
    async close() {},
  };
}
