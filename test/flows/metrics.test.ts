import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INTERNAL_TOKEN_HEADER, TENANT_HEADER } from '../../src/contracts/runner.ts';
import { startSvcProcess, type SvcProcess } from '../support/process.ts';
import { startTestSvc, type TestSvc } from '../support/svc.ts';

/**
 * One Prometheus registry per process, fed by every module it mounts: a split runner's session gauge shows on its own
 * /metrics (the root route used to shadow it), and in role all the runner's and the conductor's series share one page.
 */
const sample = (text: string, series: string): number | undefined => {
  const line = text.split('\n').find((l) => l.startsWith(series + ' '));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};

describe('a split runner process', () => {
  let runner: SvcProcess;
  let dataDir: string;
  const token = 'metrics-internal-token';
  const internal = (init: RequestInit & { json?: unknown } = {}) => {
    const headers: Record<string, string> = { [INTERNAL_TOKEN_HEADER]: `Bearer ${token}`, [TENANT_HEADER]: 'acme' };
    if (init.json !== undefined) headers['content-type'] = 'application/json';
    return { ...init, headers, body: init.json !== undefined ? JSON.stringify(init.json) : init.body };
  };

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'svc-metrics-runner-'));
    runner = await startSvcProcess(['--role=runner'], { SVC_INTERNAL_TOKEN: token, SVC_DATA_DIR: dataDir, SVC_SANDBOX: 'off' });
  });
  afterAll(async () => {
    await runner?.stop('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('shows the sessions it holds on its own /metrics, beside the standard process metrics', async () => {
    const before = await (await fetch(runner.url + '/metrics')).text();
    expect(sample(before, 'svc_runner_sessions{status="idle"}')).toBe(0);

    const profile = await fetch(runner.url + '/runner/profiles', internal({ method: 'POST', json: { profile: { name: 'p', runtime: 'general' } } }));
    expect(profile.status).toBe(204);
    for (let i = 0; i < 2; i++) {
      const created = await fetch(runner.url + '/runner/sessions', internal({ method: 'POST', json: { profileName: 'p' } }));
      expect(created.status).toBe(201);
    }

    const res = await fetch(runner.url + '/metrics');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    expect(sample(text, 'svc_runner_sessions{status="idle"}')).toBe(2);
    expect(sample(text, 'svc_runner_sessions_created_total')).toBe(2);
    expect(sample(text, 'svc_http_request_duration_seconds_count{method="POST",route="/runner/sessions",status="201"}')).toBe(2);
    for (const name of ['process_cpu_seconds_total', 'process_resident_memory_bytes', 'process_start_time_seconds', 'nodejs_eventloop_lag_seconds', 'nodejs_heap_size_used_bytes']) {
      expect(text).toMatch(new RegExp(`^# TYPE ${name} `, 'm'));
    }
  });
});

describe('role all', () => {
  let svc: TestSvc;
  beforeAll(async () => {
    svc = await startTestSvc({ DATABASE_URL: 'memory' }, 'all');
  });
  afterAll(async () => {
    await svc?.stop();
  });

  it('serves the runner\'s gauges and the conductor\'s run metrics on one /metrics', async () => {
    expect((await svc.api('/api/profiles', { method: 'POST', json: { name: 'demo', runtime: 'general', model: 'demo:echo' } })).status).toBe(201);
    const started = await svc.api('/api/runs', { method: 'POST', json: { profile: 'demo', prompt: 'count me' } });
    expect(started.status).toBe(202);
    const { runId } = (await started.json()) as { runId: string };
    await (await svc.api(`/api/runs/${runId}/stream`)).text(); // ends after the terminal event
    const run = (await (await svc.api(`/api/runs/${runId}`)).json()) as { status: string; events: Array<{ type: string; usage?: { inputTokens: number; outputTokens: number } }> };
    expect(run.status).toBe('ok');
    const used = run.events.filter((e) => e.usage).reduce((t, e) => ({ input: t.input + e.usage!.inputTokens, output: t.output + e.usage!.outputTokens }), { input: 0, output: 0 });

    const text = await (await fetch(svc.url + '/metrics')).text();
    expect(sample(text, 'svc_runner_sessions{status="idle"}')).toBe(1);
    expect(sample(text, 'svc_runner_runs_finished_total{status="ok"}')).toBe(1);
    expect(sample(text, 'svc_runs_started_total')).toBe(1);
    expect(sample(text, 'svc_runs_finished_total{status="ok"}')).toBe(1);
    expect(sample(text, 'svc_run_duration_seconds_count{status="ok"}')).toBe(1);
    expect(sample(text, 'svc_run_first_event_seconds_count')).toBe(1);
    expect(sample(text, 'svc_run_tokens_total{direction="input"}')).toBe(used.input);
    expect(sample(text, 'svc_run_tokens_total{direction="output"}')).toBe(used.output);
    expect(sample(text, 'svc_run_cost_usd_total')).toBe(0);
    expect(sample(text, 'svc_http_request_duration_seconds_count{method="GET",route="/api/runs/:id",status="200"}')).toBe(1);
    expect(text.match(/^# TYPE process_cpu_seconds_total /gm)).toHaveLength(1);
  });
});
