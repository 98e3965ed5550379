import { afterEach, describe, expect, it, vi } from 'vitest';
import { runnerConfig } from '../runner.fixture.ts';
import { createWorkerSlots, PROBE_INTERVAL_MS } from './worker-slots.ts';

afterEach(() => {
  vi.useRealTimers();
});

describe('periodic sidecar probe', () => {
  it('probes each distinct worker URL once per interval and stops on close', async () => {
    vi.useFakeTimers();
    const probed: string[] = [];
    const fetchFn = async (req: Request) => {
      probed.push(req.url);
      return Response.json({ ok: true, runtime: 'all', instanceId: 'i' });
    };
    const slots = createWorkerSlots(runnerConfig({ workerUrl: 'http://shared.test', workerUrlByRuntime: { runtime_b: 'http://b.test' } }), fetchFn);
    expect(probed).toEqual([]);

    await vi.advanceTimersByTimeAsync(PROBE_INTERVAL_MS);
    expect(probed.sort()).toEqual(['http://b.test/health', 'http://shared.test/health']);
    expect(slots.slot('general').endpoint!.state()).toBe('live');
    // two runtimes on one URL share one endpoint: one process, one record
    expect(slots.slot('general').endpoint).toBe(slots.slot('runtime_a').endpoint);

    slots.close();
    await vi.advanceTimersByTimeAsync(PROBE_INTERVAL_MS * 3);
    expect(probed).toHaveLength(2);
  });

  it('arms no timer when no worker is configured', () => {
    vi.useFakeTimers();
    const slots = createWorkerSlots(runnerConfig(), undefined);
    expect(vi.getTimerCount()).toBe(0);
    expect(slots.all().every((s) => s.endpoint === undefined)).toBe(true);
  });
});
