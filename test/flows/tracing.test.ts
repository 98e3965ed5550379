import { afterAll, beforeAll, describe, expect, it, onTestFailed, vi } from 'vitest';
import { MODEL, startCluster, type Cluster } from '../support/cluster.ts';
import { readSse, isTerminalEvent } from '../support/sse.ts';
import { NODE, startSvcProcess, type SvcProcess } from '../support/process.ts';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.ts';
import { createTestDatabase } from '../support/pg.ts';
import { attr, startOtlpReceiver as startReceiver, type OtlpReceiver } from '../support/otlp-receiver.ts';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * OpenTelemetry over the run path, on the role-split deployment as real processes (conductor, runner, worker on the
 * fake model provider), exporting OTLP/HTTP JSON (OTEL_EXPORTER_OTLP_PROTOCOL=http/json) to an in-process receiver:
 * one run that calls a tool is ONE trace whose spans cover the conductor, the runner, the worker, the model call (with
 * GenAI token counts) and the tool call on both sides, and log lines written during the run carry its trace_id.
 * Without OTEL_* variables (or with OTEL_SDK_DISABLED=true) nothing is exported and svc loads nothing of OpenTelemetry.
 */
describe('OpenTelemetry traces of a run across conductor, runner and worker processes', () => {
  let receiver: OtlpReceiver;
  let cluster: Cluster;

  beforeAll(async () => {
    receiver = await startReceiver();
    cluster = await startCluster({
      conductors: 1,
      runners: 1,
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '50', SVC_LOG_LEVEL: 'info' },
    });
    const res = await cluster.api(cluster.conductors[0], '/api/profiles', { method: 'POST', json: { name: 'helper', runtime: 'general', model: MODEL } });
    expect(res.status, await res.clone().text()).toBe(201);
  }, 60_000);

  afterAll(async () => {
    await cluster?.stop();
    await receiver?.close();
  });

  it('exports one trace per run whose spans cover conductor, runner, worker, the model calls with token counts and the tool call', async () => {
    onTestFailed(() => console.error(cluster.logs(), JSON.stringify(receiver.spans.map((s) => [s.role, s.span.name, s.span.traceId]))));
    const [conductor] = cluster.conductors;
    const start = await cluster.api(conductor, '/api/runs', { method: 'POST', json: { profile: 'helper', prompt: 'CALL_TOOL fs_write {"path":"traced.txt","content":"traced"}' } });
    expect(start.status, await start.clone().text()).toBe(202);
    const { runId } = (await start.json()) as { runId: string };
    const frames = await readSse(await cluster.api(conductor, `/api/runs/${encodeURIComponent(runId)}/stream`));
    const terminal = frames.find((f) => isTerminalEvent(f.event));
    expect(terminal?.event).toMatchObject({ type: 'result', message: expect.stringContaining('TOOL-RESULT-SEEN') });

    // the conductor's root span ends once the run's end is stored; every process flushes its batch within 50 ms
    const root = await vi.waitFor(
      () => {
        const found = receiver.spans.find((s) => s.span.name === 'svc.conductor.run' && attr(s.span, 'svc.run.id') === runId);
        expect(found).toBeDefined();
        return found!;
      },
      { timeout: 15_000, interval: 50 },
    );
    const traceId = root.span.traceId;
    const names = () => receiver.spans.filter((s) => s.span.traceId === traceId).map((s) => s.span.name);
    await vi.waitFor(
      () => {
        expect(names()).toEqual(expect.arrayContaining(['svc.conductor.run', 'svc.runner.run', 'svc.worker.run', 'svc.runner.tool fs_write', 'execute_tool fs_write']));
        expect(names().filter((n) => n.startsWith('chat '))).toHaveLength(2); // the tool call, then the answer to its result
      },
      { timeout: 15_000, interval: 50 },
    );
    const inTrace = receiver.spans.filter((s) => s.span.traceId === traceId);
    const byName = (name: string) => inTrace.find((s) => s.span.name === name)!;

    // one trace, three processes, each span under its caller
    expect(root.role).toBe('conductor');
    expect(root.span.parentSpanId || undefined).toBeUndefined();
    expect(byName('svc.runner.run').role).toBe('runner');
    expect(byName('svc.runner.run').span.parentSpanId).toBe(root.span.spanId);
    expect(byName('svc.worker.run').role).toBe('worker');
    expect(byName('svc.worker.run').span.parentSpanId).toBe(byName('svc.runner.run').span.spanId);
    expect(new Set(inTrace.map((s) => s.service))).toEqual(new Set(['svc']));
    // the run ids of other runs never leak into this trace
    expect(inTrace.filter((s) => attr(s.span, 'svc.run.id') !== undefined).every((s) => attr(s.span, 'svc.run.id') === runId)).toBe(true);

    // the model calls, in the GenAI semantic conventions, with token counts and finish reasons
    const chats = inTrace.filter((s) => s.span.name.startsWith('chat '));
    for (const chat of chats) {
      expect(chat.role).toBe('worker');
      expect(attr(chat.span, 'gen_ai.operation.name')).toBe('chat');
      expect(attr(chat.span, 'gen_ai.request.model')).toBe('fake-model');
      expect(attr(chat.span, 'gen_ai.provider.name')).toEqual(expect.any(String));
      expect(attr(chat.span, 'gen_ai.usage.input_tokens')).toBeGreaterThan(0);
      expect(attr(chat.span, 'gen_ai.usage.output_tokens')).toBeGreaterThan(0);
    }
    // the AI SDK's finish reasons: a tool call, then the final answer
    expect(chats.map((c) => attr(c.span, 'gen_ai.response.finish_reasons'))).toEqual(expect.arrayContaining([['tool-calls'], ['stop']]));

    // the tool call: the AI SDK's span on the worker, and the runner's span doing the work as its child
    const toolOnWorker = byName('execute_tool fs_write');
    const toolOnRunner = byName('svc.runner.tool fs_write');
    expect(toolOnWorker.role).toBe('worker');
    expect(attr(toolOnWorker.span, 'gen_ai.tool.name')).toBe('fs_write');
    expect(toolOnRunner.role).toBe('runner');
    expect(toolOnRunner.span.parentSpanId).toBe(toolOnWorker.span.spanId);
    // prompts and outputs stay out of traces unless OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true
    expect(inTrace.some((s) => s.span.attributes?.some((a) => a.key === 'gen_ai.input.messages'))).toBe(false);

    // logs written during the run name its trace
    const logLines = cluster.logs().split('\n').filter((l) => l.startsWith('{') && l.includes('"run finished"'));
    expect(logLines.length).toBeGreaterThanOrEqual(2); // the runner's and the worker's
    for (const line of logLines) expect(JSON.parse(line)).toMatchObject({ trace_id: traceId, span_id: expect.stringMatching(/^[0-9a-f]{16}$/) });
  }, 60_000);
});

describe('OpenTelemetry traces of a run in one process (role all: conductor, runner and worker call each other directly)', () => {
  const KEY = 'ao_test_tracingalltracingall0001';
  let receiver: OtlpReceiver;
  let fake: FakeProvider;
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let svc: SvcProcess;
  let dataDir: string;

  beforeAll(async () => {
    receiver = await startReceiver();
    fake = await startFakeProvider();
    db = await createTestDatabase();
    dataDir = mkdtempSync(join(tmpdir(), 'svc-tracing-all-'));
    svc = await startSvcProcess(['--role=all'], {
      DATABASE_URL: db.url,
      SVC_DATA_DIR: dataDir,
      SVC_BOOTSTRAP_TOKEN: KEY,
      OPENAI_COMPATIBLE_BASE_URL: fake.url,
      OPENAI_COMPATIBLE_API_KEY: 'x',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '50',
    });
  }, 60_000);

  afterAll(async () => {
    await svc?.stop();
    await db?.drop().catch(() => {});
    await fake?.close();
    await receiver?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps one trace per run with each role\'s span under its caller\'s', async () => {
    onTestFailed(() => console.error(svc.output(), JSON.stringify(receiver.spans.map((s) => [s.role, s.span.name, s.span.traceId]))));
    const api = (path: string, json?: unknown) =>
      fetch(svc.url + path, { method: json === undefined ? 'GET' : 'POST', headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, body: json === undefined ? undefined : JSON.stringify(json) });
    expect((await api('/api/profiles', { name: 'helper', runtime: 'general', model: MODEL })).status).toBe(201);
    const start = await api('/api/runs', { profile: 'helper', prompt: 'CALL_TOOL fs_write {"path":"traced.txt","content":"traced"}' });
    expect(start.status, await start.clone().text()).toBe(202);
    const { runId } = (await start.json()) as { runId: string };
    const frames = await readSse(await api(`/api/runs/${encodeURIComponent(runId)}/stream`));
    expect(frames.find((f) => isTerminalEvent(f.event))?.event).toMatchObject({ type: 'result', message: expect.stringContaining('TOOL-RESULT-SEEN') });

    const root = await vi.waitFor(
      () => {
        const found = receiver.spans.find((s) => s.span.name === 'svc.conductor.run' && attr(s.span, 'svc.run.id') === runId);
        expect(found).toBeDefined();
        return found!;
      },
      { timeout: 15_000, interval: 50 },
    );
    const inTrace = () => receiver.spans.filter((s) => s.span.traceId === root.span.traceId);
    await vi.waitFor(() => expect(inTrace().map((s) => s.span.name)).toEqual(expect.arrayContaining(['svc.runner.run', 'svc.worker.run', 'svc.runner.tool fs_write', 'execute_tool fs_write'])), {
      timeout: 15_000,
      interval: 50,
    });
    const byName = (name: string) => inTrace().find((s) => s.span.name === name)!;
    expect(byName('svc.runner.run').span.parentSpanId).toBe(root.span.spanId);
    expect(byName('svc.worker.run').span.parentSpanId).toBe(byName('svc.runner.run').span.spanId);
    expect(byName('svc.runner.tool fs_write').span.parentSpanId).toBe(byName('execute_tool fs_write').span.spanId);
  }, 60_000);
});

describe('without OTEL_* variables', () => {
  const entry = fileURLToPath(new URL('../../src/index.ts', import.meta.url));

  /**
   * A whole instance in a child process whose module resolution is recorded (module.registerHooks): it boots, runs a
   * run with a tool call on the fake provider, and prints which OpenTelemetry packages it loaded and who imported
   * each (`svc` for our own code).
   */
  async function loadedPackages(env: Record<string, string>): Promise<string[]> {
    const script = `
      import { registerHooks } from 'node:module';
      const seen = new Set();
      const owner = (url) => /node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//.exec(url ?? '')?.[1] ?? 'svc';
      registerHooks({ resolve(specifier, context, next) {
        const r = next(specifier, context);
        const m = /node_modules\\/(@opentelemetry\\/[^/]+|@ai-sdk\\/otel)\\//.exec(r.url);
        if (m && !m[1].startsWith(owner(context.parentURL))) seen.add(m[1] + ' from ' + owner(context.parentURL));
        return r;
      } });
      const { startSvc } = await import(${JSON.stringify(entry)});
      const { startFakeProvider } = await import(${JSON.stringify(fileURLToPath(new URL('../support/fake-provider.ts', import.meta.url)))});
      const fake = await startFakeProvider();
      const svc = await startSvc({ env: { ...process.env, DATABASE_URL: process.env.TEST_DATABASE_URL, OPENAI_COMPATIBLE_BASE_URL: fake.url, OPENAI_COMPATIBLE_API_KEY: 'x', SVC_BOOTSTRAP_TOKEN: 'ao_test_tracingtracingtracing01' } });
      const api = (path, init = {}) => fetch(svc.url + path, { ...init, headers: { authorization: 'Bearer ao_test_tracingtracingtracing01', 'content-type': 'application/json' } });
      await api('/api/profiles', { method: 'POST', body: JSON.stringify({ name: 'helper', runtime: 'general', model: 'openai-compatible:fake-model' }) });
      const { runId } = await (await api('/api/runs', { method: 'POST', body: JSON.stringify({ profile: 'helper', prompt: 'CALL_TOOL fs_write {"path":"a.txt","content":"a"}' }) })).json();
      const stream = await (await api('/api/runs/' + runId + '/stream')).text();
      await svc.stop();
      await fake.close();
      process.stdout.write(JSON.stringify({ loaded: [...seen].sort(), toolSeen: stream.includes('TOOL-RESULT-SEEN') }) + '\\n');
    `;
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-tracing-'));
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn(NODE, ['--input-type=module', '-e', script], {
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', SVC_LOG_LEVEL: 'warn', SVC_DATA_DIR: dataDir, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      child.on('error', reject);
      child.on('close', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`exit ${code}: ${stderr}`))));
    }).finally(() => rmSync(dataDir, { recursive: true, force: true }));
    const report = JSON.parse(out.trim().split('\n').at(-1)!) as { loaded: string[]; toolSeen: boolean };
    expect(report.toolSeen).toBe(true);
    return report.loaded;
  }

  it('loads nothing of OpenTelemetry (no SDK, exporter or AI SDK integration) and exports nothing', async () => {
    const { createTestDatabase } = await import('../support/pg.ts');
    const receiver = await startReceiver();
    const db = await createTestDatabase();
    try {
      // pg-boss and prom-client import the no-op API for their own optional instrumentation; svc imports nothing of
      // OpenTelemetry, and no SDK or exporter is loaded
      const onlyTheirApi = (loaded: string[]) => {
        expect(loaded.length).toBeGreaterThan(0); // the hook saw their imports: it would see ours
        for (const p of loaded) expect(p).toMatch(/^@opentelemetry\/api from (pg-boss|prom-client)$/);
      };
      onlyTheirApi(await loadedPackages({ TEST_DATABASE_URL: db.url }));
      // the same run with OTEL_SDK_DISABLED=true beside an endpoint: still off
      onlyTheirApi(await loadedPackages({ TEST_DATABASE_URL: db.url, OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url }));
      expect(receiver.requests()).toBe(0);
      // and the control: with the endpoint alone, the SDK, its OTLP exporter (protobuf, the spec's default) and the AI
      // SDK integration are loaded, and svc.stop() flushes the run's spans
      const on = await loadedPackages({ TEST_DATABASE_URL: db.url, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url });
      expect(on).toEqual(
        expect.arrayContaining(['@opentelemetry/api from svc', '@opentelemetry/sdk-trace-node from svc', '@opentelemetry/exporter-trace-otlp-proto from svc', '@ai-sdk/otel from svc']),
      );
      expect(on.filter((p) => p.includes('exporter-trace-otlp-http'))).toEqual([]);
      expect(receiver.requests()).toBeGreaterThan(0);
      expect(new Set(receiver.contentTypes)).toEqual(new Set(['application/x-protobuf']));
    } finally {
      await receiver.close();
      await db.drop().catch(() => {});
    }
  }, 120_000);
});
