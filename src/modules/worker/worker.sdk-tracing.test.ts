import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { configureLogging } from '../../shared/log.ts';
import { readNdjson } from '../../shared/ndjson.ts';
import { startTracing, type Tracing } from '../../shared/tracing/index.ts';
import type { RunEvent } from '../../contracts/run-event.ts';
import { startFakeProvider, type FakeProvider } from '../../../test/support/fake-provider.ts';
import { startMcpServer, type TestMcpServer } from '../../../test/support/mcp-server.ts';
import { startOtlpReceiver, type OtlpReceiver } from '../../../test/support/otlp-receiver.ts';
import { runBody, startTestWorker } from '../../../test/support/worker.ts';

configureLogging({ level: 'warn' });

/**
 * Claude Code (runtime_a) and Codex (runtime_b) for real, in a worker that exports traces: Claude Code gets the OTEL_*
 * variables with CLAUDE_CODE_ENABLE_TELEMETRY, Codex its `[otel]` trace exporter, and both TRACEPARENT of the worker's
 * run span; their own spans land in the run's trace under that span.
 */
const CALLER_SPAN = '00f067aa0ba902b7';
const OTEL = { OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '50' };

describe('SDK runtimes joining the run trace', { timeout: 90_000 }, () => {
  let receiver: OtlpReceiver;
  let fake: FakeProvider;
  let mcp: TestMcpServer;
  let root_: string;
  let tracing: Tracing;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    fake = await startFakeProvider();
    mcp = await startMcpServer({ sessionToken: 'payload.signature-of-the-session' });
    root_ = mkdtempSync(join(tmpdir(), 'svc-sdk-tracing-'));
    OTEL.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.url;
    Object.assign(process.env, OTEL); // the SDK's exporter reads its settings from the process environment, as in svc
    tracing = await startTracing(OTEL, { role: 'worker', version: 'test' });
  });
  afterAll(async () => {
    await tracing?.shutdown();
    await Promise.all([fake?.close(), mcp?.close(), receiver?.close()]);
    rmSync(root_, { recursive: true, force: true });
  });

  it.each([
    { runtime: 'runtime_a' as const, model: 'claude-sonnet-4-5', service: 'claude-code', root: 'claude_code.interaction', modelCall: 'claude_code.llm_request', traceId: '4bf92f3577b34da6a3ce929d0e0e4736' },
    { runtime: 'runtime_b' as const, model: 'gpt-5.5', service: 'codex_sdk_ts', root: 'codex.exec', modelCall: 'codex.sampling', traceId: '5cf92f3577b34da6a3ce929d0e0e4737' },
  ])('$runtime exports its own spans into the trace of the run, under the worker span', async ({ runtime, model, service, root, modelCall, traceId }) => {
    const w = await startTestWorker({
      mode: runtime,
      stateDir: mkdtempSync(join(root_, 'worker-')),
      providerEnv: { ANTHROPIC_API_KEY: 'sk-ant-fake', ANTHROPIC_BASE_URL: fake.url, OPENAI_API_KEY: 'sk-fake', OPENAI_BASE_URL: fake.url },
      otel: OTEL,
    });
    try {
      const res = await fetch(`${w.url}/run`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', traceparent: `00-${traceId}-${CALLER_SPAN}-01` },
        body: JSON.stringify(runBody('hello traced', { sessionId: `sess-${runtime}`, model, sessionMcpUrl: mcp.url, profile: { runtime } })),
      });
      const events: RunEvent[] = [];
      for await (const e of readNdjson<RunEvent>(res.body!)) events.push(e);
      expect(events.at(-1)).toMatchObject({ type: 'result', message: 'FAKE-REPLY: hello traced' });

      const inTrace = () => receiver.spans.filter((s) => s.span.traceId === traceId);
      await vi.waitFor(
        () => {
          const names = inTrace().map((s) => `${s.service} ${s.span.name}`);
          expect(names).toEqual(expect.arrayContaining([`svc svc.worker.run`, `${service} ${root}`, `${service} ${modelCall}`]));
        },
        { timeout: 20_000, interval: 100 },
      );
      const workerSpan = inTrace().find((s) => s.span.name === 'svc.worker.run' && s.span.parentSpanId === CALLER_SPAN)!;
      expect(workerSpan).toBeDefined();
      // the child's outermost span hangs under the worker's run span (TRACEPARENT), not beside it
      expect(inTrace().find((s) => s.service === service && s.span.name === root)!.span.parentSpanId).toBe(workerSpan.span.spanId);
    } finally {
      await w.close();
    }
  });
});
