import type { Config } from '../../../../config/config.ts';
import { runEvent } from '../../../../contracts/run-event.ts';
import { stateContentType } from '../../../../contracts/worker.ts';
import { describeError } from '../../../../shared/errors.ts';
import type { WorkerRuntime } from '../../runtime.ts';
import { createHistoryStore, parseHistory, resumeHistory, serializeHistory, DEFAULT_HISTORY_LIMITS, type HistoryLimits } from './history.ts';
import { systemPromptOf, userPromptOf } from '../prompt.ts';

/** The AI SDK side of a run (engine.ts), imported on the first run: an idle server does not hold the SDK and providers. */
let engine: Promise<typeof import('./engine.ts')> | undefined;
const loadEngine = () => (engine ??= import('./engine.ts'));

/**
 * The `general` runtime: the AI SDK over a provider registry (every provider of contracts/model-providers.ts, each package loaded on first use), tools from
 * the runner's session MCP endpoint and the profile's MCP servers, and a bounded in-memory history per session that
 * is exported and imported as a JSON array of ModelMessage. Created by the worker server for MODE general and all.
 */
export function createGeneralRuntime(config: Config['worker'], limits: HistoryLimits = DEFAULT_HISTORY_LIMITS): WorkerRuntime {
  // The AI SDK prints provider warnings to the console; the worker's stdout belongs to its logs.
  (globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;
  const history = createHistoryStore(limits);

  return {
    id: 'general',
    async *run(req, signal) {
      yield runEvent('session', { runtimeSessionId: req.sessionId });
      const { envWithOverride, resolveModel, applySettings, openToolCatalog, runTurn, planTools, applyAllowlist, aiTelemetry } = await loadEngine();
      let resolved;
      try {
        const model = req.modelOverride?.model ?? req.profile.model;
        resolved = await resolveModel(envWithOverride(config.providerEnv, req.modelOverride, model), model);
      } catch (err) {
        yield runEvent('error', { message: describeError(err) });
        return;
      }
      const catalog = await openToolCatalog(req, signal, config.privateAddresses);
      try {
        for (const note of catalog.notes) yield runEvent('progress', { message: note });
        const settings = applySettings(resolved.provider, resolved.providerOptions, req.modelOverride);
        const plan = planTools(applyAllowlist(catalog.entries, req.profile.tools));
        yield* plan.opening;
        if (req.resume) {
          // a parked turn resumes: its pending call gets the decided call's result, and the model goes on from there
          const patched = resumeHistory(history.get(req.sessionId), req.resume.approvalId, req.resume.output);
          if (!patched) {
            yield runEvent('error', { message: `session ${req.sessionId} has no tool call pending on approval ${req.resume.approvalId} to resume` });
            return;
          }
          history.replace(req.sessionId, patched);
        }
        yield* runTurn({
          model: resolved.model,
          provider: resolved.provider,
          providerOptions: settings.providerOptions,
          reasoning: settings.reasoning,
          system: systemPromptOf(req),
          history: history.get(req.sessionId),
          prompt: req.resume ? undefined : userPromptOf(req),
          tools: plan.tools,
          takeSpan: plan.takeSpan,
          stepCount: config.stepCount,
          stallTimeoutMs: config.modelStallTimeoutMs,
          signal,
          commit: (messages) => history.append(req.sessionId, messages),
          telemetry: await aiTelemetry(config.otel),
        });
      } finally {
        await catalog.close();
      }
    },
    async exportState(sessionId) {
      if (!history.has(sessionId)) return undefined;
      return { contentType: stateContentType('general'), runtimeSessionId: sessionId, body: serializeHistory(history.get(sessionId)) };
    },
    async importState(sessionId, body) {
      history.replace(sessionId, parseHistory(body)); // parse first: a bad bundle leaves the session unseeded
    },
    async close() {},
  };
}
