import { describe, expect, it } from 'vitest';
import { DEFAULT_CEILINGS, DEFAULT_LIMITS, type LimitsReport } from '../../../contracts/sandbox-limits.ts';
import type { RunnerInfo } from '../../../contracts/runner.wire.ts';
import { runnerLimitsCheck, runnerLimitsOf } from './runner-limits.ts';
import { limitsForRunner } from './sandbox-limits.service.ts';

/** What the conductor makes of a runner's limits report, and the limits it sends a runner with a profile. */
const report = (over: Partial<LimitsReport>): LimitsReport => ({
  mode: 'require',
  enforced: { memoryMiB: 'cgroup-v1', cpus: 'cgroup-v1', pids: 'cgroup-v1', wallSeconds: 'timer', cpuSeconds: 'rlimit', fileMiB: 'rlimit', diskMiB: 'loop-ext4', outputBytes: 'runner', openFiles: 'rlimit' },
  missing: [],
  defaults: DEFAULT_LIMITS,
  ceilings: DEFAULT_CEILINGS,
  ...over,
});
const info = (limits?: LimitsReport) => ({ id: 'r', hash: 'h', ...(limits ? { limits } : {}) }) as unknown as RunnerInfo;

describe("a runner's limits report", () => {
  it('reads as one line grouped by mechanism, with no warning when everything is enforced', () => {
    expect(runnerLimitsCheck(info(report({})))).toEqual({
      detail: 'sandbox limits require: cgroup-v1 (memory, cpu, pids), timer (wall time), rlimit (cpu time, file size, open files), loop-ext4 (disk), runner (output)',
    });
    // and the cap on all its sandboxes together, where it has one
    expect(runnerLimitsCheck(info(report({ totalCpus: 1.5 }))).detail).toMatch(/runner \(output\); all sandboxes together at most 1.5 CPUs$/);
  });

  it('warns when best-effort leaves mechanisms missing, or limits are off', () => {
    const partial = report({ mode: 'best-effort', enforced: { ...report({}).enforced, diskMiB: 'none' }, missing: ['disk: no loop device (needs CAP_SYS_ADMIN)'] });
    expect(runnerLimitsCheck(info(partial))).toMatchObject({ warning: 'sandbox limits best-effort, not enforced: disk: no loop device (needs CAP_SYS_ADMIN)' });
    expect(runnerLimitsCheck(info(report({ mode: 'off' }))).warning).toMatch(/^sandbox limits off \(SVC_SANDBOX_LIMITS=off\)/);
  });

  it('is absent from a runner older than limits', () => {
    expect(runnerLimitsOf(info())).toBeUndefined();
    expect(runnerLimitsCheck(info())).toEqual({});
  });
});

describe('the limits a profile carries to a runner', () => {
  const operator = { defaults: DEFAULT_LIMITS, ceilings: { ...DEFAULT_CEILINGS, memoryMiB: 4096 } };

  it("are the profile's, held to the lower of the operator's and the tenant's ceiling", () => {
    expect(limitsForRunner(operator, {}, { memoryMiB: 6000, cpus: 0.5 })).toEqual({ memoryMiB: 4096, cpus: 0.5 });
    expect(limitsForRunner(operator, { cpus: 0.25 }, { memoryMiB: 2048, cpus: 0.5 })).toEqual({ memoryMiB: 2048, cpus: 0.25 });
  });

  it("add each key the tenant holds below the operator's default, and nothing for one above it", () => {
    expect(limitsForRunner(operator, { pids: 64, wallSeconds: 3000 }, undefined)).toEqual({ pids: 64 });
    expect(limitsForRunner(operator, {}, undefined)).toBeUndefined();
  });
});
